import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLimited } from '../../dev/pool.js';
import type { DirectActivities } from '../direct-placement.js';
import { expireOrder } from '../expiry.js';
import { RedisDeadlines } from './redis-deadlines.js';

/**
 * The Redis peer's consumer: a worker that claims due orders (redis-deadlines.ts), runs the
 * service's guarded cancel and compensation on each (expireOrder), and acks; and a reaper that
 * puts back claims older than the visibility timeout (a worker that died holding them).
 */
export const REDIS_PEER = {
  /** Claims per Lua call. */
  batch: 100,
  /** Expiries run at once (as the scan job's compensation). */
  concurrency: 8,
  /** A claim not acked within this is put back: longer than a batch ever takes. */
  visibilityMs: 30_000,
  reapEveryMs: 5_000,
  /** The worker sleeps until the earliest deadline, at most this long (a deadline added meanwhile waits that much). */
  maxSleepMs: 1_000,
} as const;

export interface RedisPeerStats {
  claimed: number;
  cancelled: number;
  compensatedAgain: number;
  settled: number;
  putBack: number;
  failed: number;
  reaped: number;
}

export function startRedisPeer(direct: DirectActivities, redisUrl: string) {
  const redis = new Redis(redisUrl);
  const deadlines = new RedisDeadlines(redis);
  const stats: RedisPeerStats = {
    claimed: 0,
    cancelled: 0,
    compensatedAgain: 0,
    settled: 0,
    putBack: 0,
    failed: 0,
    reaped: 0,
  };
  let stopped = false;

  async function expire(orderId: string): Promise<void> {
    try {
      const done = await expireOrder(direct, orderId);
      if (done.outcome === 'not-due') {
        stats.putBack++;
        return await deadlines.putBack(orderId, done.expiresAtMs);
      }
      stats[done.outcome === 'cancelled' ? 'cancelled' : done.outcome === 'settled' ? 'settled' : 'compensatedAgain']++;
      await deadlines.ack(orderId);
    } catch (err) {
      // Left claimed: the reaper puts it back once its visibility timeout passes.
      stats.failed++;
      console.error(`redis peer: ${orderId}: ${(err as Error).message}`);
    }
  }

  const worker = (async () => {
    while (!stopped) {
      const due = await deadlines.claim(Date.now(), REDIS_PEER.batch, REDIS_PEER.visibilityMs);
      stats.claimed += due.length;
      if (due.length > 0) {
        await forEachLimited(due, REDIS_PEER.concurrency, expire);
        continue;
      }
      const next = await deadlines.nextDeadline();
      const wait = next === undefined ? REDIS_PEER.maxSleepMs : Math.min(REDIS_PEER.maxSleepMs, next - Date.now());
      await sleep(Math.max(5, wait));
    }
  })();

  const reaper = (async () => {
    while (!stopped) {
      await sleep(REDIS_PEER.reapEveryMs);
      stats.reaped += await deadlines.reap(Date.now(), 1_000);
    }
  })();

  return {
    async stop(): Promise<RedisPeerStats> {
      stopped = true;
      await Promise.all([worker, reaper]);
      redis.disconnect();
      return stats;
    },
  };
}
