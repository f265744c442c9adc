import type { Redis } from 'ioredis';

/**
 * The background documents' default design (docs in /work/shared/background, 000): a sorted set
 * of deadlines (member: the order id, score: its expires_at in ms), claimed atomically by a Lua
 * script that moves due members into a processing set scored with when the claim times out
 * (a visibility timeout, as SQS has); the worker removes a claim once the expiry is done (the ack),
 * and a reaper puts claims that timed out back. At least once, so the expiry must be idempotent:
 * the service's guarded cancel is.
 */
export const KEYS = { deadlines: 'bench:deadlines', processing: 'bench:processing' } as const;

/** Due members (score ≤ now) into the processing set, scored now + the visibility timeout. */
const CLAIM = `
local due = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, ARGV[2])
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], ARGV[1] + ARGV[3], id)
end
return due`;

/** Claims whose visibility timeout has passed, back into the deadlines (due at once). */
const REAP = `
local late = redis.call('ZRANGE', KEYS[2], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, ARGV[2])
for _, id in ipairs(late) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZADD', KEYS[1], ARGV[1], id)
end
return #late`;

export class RedisDeadlines {
  constructor(private readonly redis: Redis) {}

  /** An order's deadline (placement). */
  async schedule(orderId: string, expiresAtMs: number): Promise<void> {
    await this.redis.zadd(KEYS.deadlines, expiresAtMs, orderId);
  }

  /** Payment: the order no longer expires. A claim already taken loses to the payment in the guarded cancel. */
  async forget(orderId: string): Promise<void> {
    await this.redis.zrem(KEYS.deadlines, orderId);
  }

  async claim(nowMs: number, limit: number, visibilityMs: number): Promise<string[]> {
    return (await this.redis.eval(CLAIM, 2, KEYS.deadlines, KEYS.processing, nowMs, limit, visibilityMs)) as string[];
  }

  /** The expiry is done: the claim goes. */
  async ack(orderId: string): Promise<void> {
    await this.redis.zrem(KEYS.processing, orderId);
  }

  /** Claimed too early (the order's deadline moved or clocks differ): back for `expiresAtMs`, then the claim goes. */
  async putBack(orderId: string, expiresAtMs: number): Promise<void> {
    await this.redis.multi().zadd(KEYS.deadlines, expiresAtMs, orderId).zrem(KEYS.processing, orderId).exec();
  }

  async reap(nowMs: number, limit: number): Promise<number> {
    return (await this.redis.eval(REAP, 2, KEYS.deadlines, KEYS.processing, nowMs, limit)) as number;
  }

  /** The earliest deadline waiting, if any (the worker sleeps until it). */
  async nextDeadline(): Promise<number | undefined> {
    const [, score] = await this.redis.zrange(KEYS.deadlines, 0, 0, 'WITHSCORES');
    return score === undefined ? undefined : Number(score);
  }

  async sizes(): Promise<{ waiting: number; processing: number }> {
    const [waiting, processing] = await Promise.all([
      this.redis.zcard(KEYS.deadlines),
      this.redis.zcard(KEYS.processing),
    ]);
    return { waiting, processing };
  }
}
