import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { ConfigError, duration, nonEmpty, port } from './env.js';

/** How the processes serve: the API's port, the address it and the worker's /metrics listen on, who is believed about a client's address, and the grace on SIGTERM. */
export const HttpSchema = z.object({
  PORT: port.default(3000),
  // Addition: where the API and the worker's /metrics listen (unset: loopback under npm start's stack, else every interface).
  LISTEN_ADDRESS: z.union([z.ipv4(), z.ipv6()], 'must be an IP address, e.g. 127.0.0.1 or 0.0.0.0').optional(),
  TRUST_PROXY: nonEmpty.optional(),
  SHUTDOWN_GRACE: nonEmpty.default('10s'),
});

export interface HttpSettings {
  port: number;
  /** Where the API and the worker's /metrics listen: loopback under the embedded stack, else 0.0.0.0 (LISTEN_ADDRESS). */
  listenAddress: string;
  /**
   * Which proxies in front of the API are believed about the client's address (X-Forwarded-For),
   * as Express's `trust proxy` takes it: false (none, the default outside production), a hop count,
   * or addresses and CIDRs. The guessed-token throttle counts per that address.
   */
  trustProxy: TrustProxy;
  /** How long the worker lets in-flight activities finish, and the API in-flight requests, on SIGTERM. */
  shutdownGraceMs: number;
}

export type TrustProxy = false | number | string[];

export function httpSettings(
  e: z.infer<typeof HttpSchema>,
  { embedded, production }: { embedded: boolean; production: boolean },
): HttpSettings {
  return {
    port: e.PORT,
    // npm start's stack runs on public development secrets: reachable from this machine only.
    listenAddress: e.LISTEN_ADDRESS ?? (embedded ? '127.0.0.1' : '0.0.0.0'),
    trustProxy: trustProxy(e.TRUST_PROXY, production),
    shutdownGraceMs: duration('SHUTDOWN_GRACE', e.SHUTDOWN_GRACE),
  };
}

/**
 * TRUST_PROXY: `none` or `false` (the default outside production), a hop count, or a comma-separated
 * list of addresses, CIDRs and proxy-addr's names (loopback, linklocal, uniquelocal), each checked
 * with the library Express itself compiles it with. Never `true`: trusting every hop lets any client
 * write its own address. Under NODE_ENV=production it must be set: whether a load balancer stands in
 * front decides which address the API counts guesses and rate limits by, and only the deployment
 * knows.
 */
function trustProxy(text: string | undefined, production: boolean): TrustProxy {
  if (text === undefined && production)
    throw new ConfigError(
      "TRUST_PROXY: required under NODE_ENV=production: `none` when clients reach the API directly, else the balancers' hop count or addresses",
    );
  if (text === undefined || text === 'false' || text === 'none') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops < 1 || hops > 10) throw new ConfigError('TRUST_PROXY: a hop count must be 1 to 10 (or none)');
    return hops;
  }
  if (text === 'true')
    throw new ConfigError(
      "TRUST_PROXY: `true` would believe any X-Forwarded-For a client writes; give the hop count or the proxies' addresses",
    );
  const entries = text.split(',').map((entry) => entry.trim());
  try {
    proxyAddr.compile(entries);
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY: ${(err as Error).message} (want none, a hop count, or addresses and CIDRs)`);
  }
  return entries;
}
