import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { HEALTH_MAX_AGE_MS, healthCheck, PROBE_TIMEOUT_MS } from '../../api/health-check.js';
import type { Db } from '../../lib/db.js';

/**
 * /healthz's cost does not grow with its callers: one probe (a `SELECT 1` and Temporal's
 * getSystemInfo) answers every caller while it runs and for HEALTH_MAX_AGE_MS after, and a
 * dependency that does not answer within PROBE_TIMEOUT_MS is down.
 */
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Backends that count their calls and answer after `latencyMs` (never, when Infinity), or fail. */
function backends({ dbLatencyMs = 10, dbFails = false }: { dbLatencyMs?: number; dbFails?: boolean } = {}) {
  const calls = { db: 0, temporal: 0 };
  const after = <T>(ms: number, value: T, fail = false) =>
    new Promise<T>((resolve, reject) => {
      if (ms === Infinity) return;
      setTimeout(() => (fail ? reject(new Error('refused')) : resolve(value)), ms);
    });
  const db = {
    pool: {
      query: (text: string) => {
        expect(text).toBe('SELECT 1');
        calls.db++;
        return after(dbLatencyMs, { rows: [] }, dbFails);
      },
    },
  } as unknown as Db;
  const temporal = {
    workflowService: {
      getSystemInfo: () => {
        calls.temporal++;
        return after(10, {});
      },
    },
  } as unknown as Client;
  return { check: healthCheck({ db, temporal }), calls };
}

it('answers a crowd of concurrent callers from one probe', async () => {
  const { check, calls } = backends();
  const answers = Promise.all(Array.from({ length: 100 }, () => check()));
  await vi.advanceTimersByTimeAsync(20);
  expect(await answers).toEqual(Array(100).fill({ db: 'ok', temporal: 'ok' }));
  expect(calls).toEqual({ db: 1, temporal: 1 });
});

it(`reuses a result for ${HEALTH_MAX_AGE_MS} ms after it came, then probes again`, async () => {
  const { check, calls } = backends();
  const first = check();
  await vi.advanceTimersByTimeAsync(20);
  await first;
  for (let t = 0; t < HEALTH_MAX_AGE_MS - 100; t += 100) {
    await check();
    await vi.advanceTimersByTimeAsync(100);
  }
  expect(calls).toEqual({ db: 1, temporal: 1 });
  await vi.advanceTimersByTimeAsync(100);
  const next = check();
  await vi.advanceTimersByTimeAsync(20);
  await next;
  expect(calls).toEqual({ db: 2, temporal: 2 });
});

it('a slow probe is shared until it ends, however long, so probes never overlap', async () => {
  const { check, calls } = backends({ dbLatencyMs: 1_500 });
  const answers: Array<Promise<unknown>> = [];
  for (let t = 0; t < 1_500; t += 100) {
    answers.push(check());
    await vi.advanceTimersByTimeAsync(100);
  }
  expect(await Promise.all(answers)).toEqual(Array(answers.length).fill({ db: 'ok', temporal: 'ok' }));
  expect(calls).toEqual({ db: 1, temporal: 1 });
});

it(`a database that does not answer within ${PROBE_TIMEOUT_MS} ms, or refuses, is down, and that is cached too`, async () => {
  const hanging = backends({ dbLatencyMs: Infinity });
  const answer = hanging.check();
  await vi.advanceTimersByTimeAsync(PROBE_TIMEOUT_MS);
  expect(await answer).toEqual({ db: 'down', temporal: 'ok' });
  expect(await hanging.check()).toEqual({ db: 'down', temporal: 'ok' });
  expect(hanging.calls).toEqual({ db: 1, temporal: 1 });

  const refusing = backends({ dbFails: true });
  const refused = refusing.check();
  await vi.advanceTimersByTimeAsync(20);
  expect(await refused).toEqual({ db: 'down', temporal: 'ok' });
});
