import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { findFreePort } from '../../dev/ports.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createTimeSkippingEnv } from '../helpers/temporal.js';

/**
 * When a start-up step of the worker or the API fails, the process releases what the steps before
 * opened (the database pool, the metrics server, the Temporal connection) and exits at once with
 * one log line saying what is wrong, instead of hanging on an open handle.
 */
let database: TestDatabase;
let temporal: TestWorkflowEnvironment;
beforeAll(async () => {
  [database, temporal] = await Promise.all([createTestDatabase(), createTimeSkippingEnv()]);
}, 60_000);
afterAll(async () => {
  await temporal?.teardown();
  await database?.drop();
});

/** Outside the embedded stack every secret must be set, long and not a public default (lib/config/secrets.ts). */
const SECRETS = {
  ADMIN_TOKEN: 'start-failure-admin-token-0123456789',
  PAYMENT_WEBHOOK_SECRET: 'start-failure-webhook-secret-0123456789',
  CUSTOMER_JWT_SECRET: 'start-failure-customer-jwt-secret-0123456789',
  ORDER_ID_SECRET: 'start-failure-order-id-secret-0123456789abcdef',
};
/** Between the error line and the exit: a handle left open (the pool's idle client alone: 10 s) keeps it longer. */
const PROMPT_MS = 3_000;

interface Run {
  code: number | null;
  lines: Array<{ level: number; time: number; msg: string; err?: unknown }>;
  exitedAt: number;
}

/** Runs an entry point until it exits, killing it after 60 s. */
async function runUntilExit(entry: string, env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...SECRETS, DATABASE_URL: database.url, THIRD_PARTIES: 'fake', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return {
    code,
    exitedAt: Date.now(),
    lines: output
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Run['lines'][number]),
  };
}

function expectOneLineThenExit(run: Run, msg: RegExp): void {
  expect(run.lines).toEqual([
    {
      level: 50,
      time: expect.any(Number),
      pid: expect.any(Number),
      hostname: expect.any(String),
      name: expect.any(String),
      msg: expect.stringMatching(msg),
    },
  ]);
  expect(run.code).toBe(1);
  expect(run.exitedAt - run.lines[0]!.time).toBeLessThan(PROMPT_MS);
}

/** A port that accepts connections and hangs up: taken, as far as a server wanting it is concerned. */
async function takenPort(use: (port: number) => Promise<void>): Promise<void> {
  const holder = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '0.0.0.0', resolve));
  try {
    await use((holder.address() as net.AddressInfo).port);
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
}

it('the worker, Temporal unreachable (its database and metrics server open): one line naming TEMPORAL_ADDRESS, exits at once', async () => {
  const run = await runUntilExit('dev/worker.ts', {
    TEMPORAL_ADDRESS: `127.0.0.1:${await findFreePort()}`,
    WORKER_METRICS_PORT: String(await findFreePort()),
    TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${await findFreePort()}`,
  });
  expectOneLineThenExit(
    run,
    /^TEMPORAL_ADDRESS: cannot connect to Temporal at 127\.0\.0\.1:\d+ \(.*Connection refused/,
  );
}, 90_000);

it('the worker, its metrics port taken (its database open): one line naming WORKER_METRICS_PORT, exits at once', async () => {
  await takenPort(async (port) => {
    const run = await runUntilExit('dev/worker.ts', {
      TEMPORAL_ADDRESS: temporal.address,
      WORKER_METRICS_PORT: String(port),
      TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${await findFreePort()}`,
    });
    expectOneLineThenExit(run, new RegExp(`^WORKER_METRICS_PORT ${port} is already in use`));
  });
}, 90_000);

it('the API, its port taken (its database and Temporal connection open): one line, exits at once', async () => {
  await takenPort(async (port) => {
    // Fault injection checks the fakes' schema at start, so the pool holds a connection by then;
    // it is the embedded stack's, so the API runs as npm start's stack starts it.
    const run = await runUntilExit('dev/api.ts', {
      TEMPORAL_ADDRESS: temporal.address,
      EMBEDDED_STACK: 'true',
      FAULTS_ENABLED: 'true',
      PORT: String(port),
    });
    expectOneLineThenExit(run, new RegExp(`^PORT ${port} is already in use`));
  });
}, 90_000);

it('the API, Temporal unreachable: one line naming TEMPORAL_ADDRESS once the connection times out, exits at once', async () => {
  const run = await runUntilExit('dev/api.ts', {
    TEMPORAL_ADDRESS: `127.0.0.1:${await findFreePort()}`,
    EMBEDDED_STACK: 'true',
    FAULTS_ENABLED: 'true',
    PORT: String(await findFreePort()),
  });
  expectOneLineThenExit(run, /^TEMPORAL_ADDRESS: cannot connect to Temporal at 127\.0\.0\.1:\d+ \(/);
}, 90_000);
