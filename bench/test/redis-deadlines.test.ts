import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../../dev/ports.js';
import { KEYS, RedisDeadlines } from '../peers/redis-deadlines.js';
import { startRedisServer, type RunningRedis } from '../peers/redis-server.js';

/** The Redis peer's queue on a real redis-server: the claim, the ack, the reaper, the payment. */
let server: RunningRedis;
let redis: Redis;
let deadlines: RedisDeadlines;
let logDir: string;

beforeAll(async () => {
  logDir = await mkdtemp(join(tmpdir(), 'redis-deadlines-test-'));
  server = await startRedisServer(await findFreePort(), logDir);
  redis = new Redis(server.url);
  deadlines = new RedisDeadlines(redis);
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  await rm(logDir, { recursive: true, force: true });
});

beforeEach(async () => {
  await redis.del(KEYS.deadlines, KEYS.processing);
});

describe('the Redis peer’s deadlines', () => {
  it('claims only due orders, moving them into the processing set until acked', async () => {
    await deadlines.schedule('due-1', 1_000);
    await deadlines.schedule('due-2', 2_000);
    await deadlines.schedule('later', 9_000);
    expect(await deadlines.claim(5_000, 10, 30_000)).toEqual(['due-1', 'due-2']);
    expect(await deadlines.sizes()).toEqual({ waiting: 1, processing: 2 });
    expect(await deadlines.claim(5_000, 10, 30_000)).toEqual([]); // a second consumer gets nothing twice
    await deadlines.ack('due-1');
    expect(await redis.zrange(KEYS.processing, 0, -1, 'WITHSCORES')).toEqual(['due-2', '35000']);
    expect(await deadlines.nextDeadline()).toBe(9_000);
  });

  it('puts back claims whose visibility timeout has passed, and only those', async () => {
    await deadlines.schedule('a', 1_000);
    await deadlines.claim(1_000, 10, 30_000); // held until 31,000
    await deadlines.schedule('b', 20_000);
    await deadlines.claim(20_000, 10, 30_000); // held until 50,000
    expect(await deadlines.reap(40_000, 100)).toBe(1);
    expect(await deadlines.claim(40_000, 10, 30_000)).toEqual(['a']);
  });

  it('forgets a paid order, and takes an early claim back for its deadline', async () => {
    await deadlines.schedule('paid', 1_000);
    await deadlines.forget('paid');
    expect(await deadlines.claim(5_000, 10, 30_000)).toEqual([]);
    await deadlines.schedule('early', 1_000);
    await deadlines.claim(1_000, 10, 30_000);
    await deadlines.putBack('early', 8_000);
    expect(await deadlines.sizes()).toEqual({ waiting: 1, processing: 0 });
    expect(await deadlines.nextDeadline()).toBe(8_000);
  });
});
