import { z } from 'zod';
import { ConfigError, duration, limit, LOOPBACK_HOSTS, nonEmpty } from './env.js';
import { DEV_ADMIN_TOKEN, DEV_CUSTOMER_JWT_SECRET, hmacKey, secret } from './secrets.js';

/** Who may call: the operators' token and session, Prometheus's token, customers' tokens, and the throttle on guesses. */
export const AuthSchema = z.object({
  ADMIN_TOKEN: nonEmpty.optional(),
  // Additions (docs/api.md, "Who may call what"): Prometheus's own token, and failed-credential throttling.
  METRICS_TOKEN: nonEmpty.optional(),
  AUTH_FAILURES_PER_MINUTE_PER_ADDRESS: limit.default(20),
  // Addition (docs/temporal.md, "Encrypted payloads"): the operators' session cookie (the orders page and the codec endpoints).
  OPERATOR_SESSION_TTL: nonEmpty.default('8h'),
  // Additions (docs/api.md, "Who may call what"): customer identity.
  CUSTOMER_JWT_SECRET: hmacKey.optional(),
  CUSTOMER_JWKS_URL: z.url().optional(),
  CUSTOMER_JWT_ISSUER: nonEmpty.optional(),
  CUSTOMER_JWT_AUDIENCE: nonEmpty.optional(),
  CUSTOMER_JWT_MAX_AGE: nonEmpty.default('1h'),
});

export interface AuthSettings {
  adminToken: string;
  /** Prometheus's bearer token for the API's /metrics, which it opens and nothing else; unset: only ADMIN_TOKEN opens it. */
  metricsToken: string | undefined;
  /** Guessed credentials one client address may send per minute before its further guesses are refused (429); 0: no limit. */
  authFailuresPerMinutePerAddress: number;
  /** How customers' bearer tokens (JWTs) are verified. */
  customerTokens: CustomerTokenSettings;
  /** The operators' session cookie, issued by `POST /operator/session` (api/operator-session.ts). */
  operatorSession: OperatorSessionSettings;
}

export interface OperatorSessionSettings {
  /** How long a session lasts from sign-in (OPERATOR_SESSION_TTL). */
  ttlMs: number;
  /** The cookie's `Secure`: off only on npm start's embedded stack, served over plain http on loopback. */
  secureCookie: boolean;
}

/**
 * Either a shared secret (HS256), or an identity provider's public keys (RS256, from its JWKS URL),
 * never both: a deployment that trusts its provider must not also accept the public dev secret.
 */
export type CustomerTokenSettings = (
  | {
      algorithm: 'HS256';
      secret: string;
      /** Required `iss` and `aud` claims, when set. */
      issuer?: string | undefined;
      audience?: string | undefined;
    }
  | {
      algorithm: 'RS256';
      jwksUrl: string;
      /** Required: a provider issues tokens for other applications too, and those must be refused here. */
      issuer: string;
      audience: string;
    }
) & {
  /** How old (by `iat`, which it then requires) a token may be, whatever its `exp` says. */
  maxAgeSeconds: number;
};

export function authSettings(e: z.infer<typeof AuthSchema>, embedded: boolean): AuthSettings {
  const adminToken = secret('ADMIN_TOKEN', e.ADMIN_TOKEN, DEV_ADMIN_TOKEN, embedded);
  const customerTokenSettings = customerTokens(e, embedded);
  const metricsToken =
    e.METRICS_TOKEN === undefined ? undefined : secret('METRICS_TOKEN', e.METRICS_TOKEN, '', embedded);
  if (metricsToken === adminToken)
    throw new ConfigError("METRICS_TOKEN: must differ from ADMIN_TOKEN, or Prometheus holds the operators' power");
  const operatorSessionTtlMs = duration('OPERATOR_SESSION_TTL', e.OPERATOR_SESSION_TTL);
  if (operatorSessionTtlMs < 60_000 || operatorSessionTtlMs > 7 * 24 * 3_600_000)
    throw new ConfigError('OPERATOR_SESSION_TTL: must be from 1m to 168h');
  return {
    adminToken,
    metricsToken,
    authFailuresPerMinutePerAddress: e.AUTH_FAILURES_PER_MINUTE_PER_ADDRESS,
    customerTokens: customerTokenSettings,
    operatorSession: { ttlMs: operatorSessionTtlMs, secureCookie: !embedded },
  };
}

function customerTokens(e: z.infer<typeof AuthSchema>, embedded: boolean): CustomerTokenSettings {
  const maxAgeSeconds = Math.floor(duration('CUSTOMER_JWT_MAX_AGE', e.CUSTOMER_JWT_MAX_AGE) / 1000);
  if (maxAgeSeconds < 1) throw new ConfigError('CUSTOMER_JWT_MAX_AGE: must be at least 1s');
  const { CUSTOMER_JWT_ISSUER: issuer, CUSTOMER_JWT_AUDIENCE: audience } = e;
  if (e.CUSTOMER_JWKS_URL === undefined) {
    const key = secret('CUSTOMER_JWT_SECRET', e.CUSTOMER_JWT_SECRET, DEV_CUSTOMER_JWT_SECRET, embedded);
    return { algorithm: 'HS256', secret: key, issuer, audience, maxAgeSeconds };
  }
  if (e.CUSTOMER_JWT_SECRET !== undefined)
    throw new ConfigError('CUSTOMER_JWT_SECRET: set either it (HS256) or CUSTOMER_JWKS_URL (RS256), not both');
  const url = new URL(e.CUSTOMER_JWKS_URL);
  // The keys decide who is a customer: fetched in clear, anyone on the path could substitute their own.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname)))
    throw new ConfigError('CUSTOMER_JWKS_URL: must be https (plain http only to this machine, for tests)');
  if (issuer === undefined)
    throw new ConfigError("CUSTOMER_JWT_ISSUER: required with CUSTOMER_JWKS_URL (the provider's `iss`)");
  if (audience === undefined)
    throw new ConfigError(
      "CUSTOMER_JWT_AUDIENCE: required with CUSTOMER_JWKS_URL (this service's `aud` at the provider)",
    );
  return { algorithm: 'RS256', jwksUrl: e.CUSTOMER_JWKS_URL, issuer, audience, maxAgeSeconds };
}
