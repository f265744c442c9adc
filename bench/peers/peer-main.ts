import { writeFileSync } from 'node:fs';
import { createDirectActivities } from '../direct-placement.js';
import { startGraphilePeer } from './graphile.js';
import type { PeerKind } from './kinds.js';
import { startRedisPeer } from './redis.js';
import { startScanCanceller } from './scan.js';

/**
 * A peer's process (bench/peers/peer-process.ts starts it): the peer's consumer with the service's
 * activities, until SIGTERM; then its counters go to `statsFile`. A SIGKILL leaves no counters:
 * what the crash did is read from the database afterwards.
 */
export interface PeerProcessArgs {
  kind: PeerKind;
  databaseUrl: string;
  redisUrl: string | undefined;
  paymentWindowMs: number;
  scan: { everyMs: number; batch: number; prefix: string };
  statsFile: string;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]!) as PeerProcessArgs;
  const direct = createDirectActivities(args.databaseUrl, {
    paymentWindowMs: args.paymentWindowMs,
    maxConnections: 10,
  });
  const peer =
    args.kind === 'scan'
      ? startScanCanceller(direct, { ...args.scan, compensationConcurrency: 8 })
      : args.kind === 'redis'
        ? startRedisPeer(direct, args.redisUrl!)
        : await startGraphilePeer(direct, args.databaseUrl);
  console.log(`peer ${args.kind} running`);
  process.once('SIGTERM', () => {
    void (async () => {
      const stats = await peer.stop();
      writeFileSync(args.statsFile, JSON.stringify(stats));
      await direct.close();
      process.exit(0);
    })();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
