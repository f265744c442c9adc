import net from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findFreePort } from '../../dev/ports.js';
import { startTypeScript, waitForApi } from '../../dev/service-processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createTimeSkippingEnv } from '../helpers/temporal.js';
import { SERVICE_SECRETS } from '../helpers/service-secrets.js';

/**
 * How the dev commands (npm start, chaos, bench) decide that the API is up: by its own answer on
 * GET /healthz. A port that merely accepts connections may belong to another process, which is how
 * a chaos run in CI once sent its first request to something else while the API died on EADDRINUSE.
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

function startApi(port: number) {
  return startTypeScript('API', 'api/server.ts', {
    ...process.env,
    ...SERVICE_SECRETS,
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporal.address,
    PORT: String(port),
    LOG_LEVEL: 'error',
  });
}

it('is ready once the API answers GET /healthz', async () => {
  const port = await findFreePort();
  const api = startApi(port);
  try {
    await waitForApi(api.exited, port);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ db: 'ok', temporal: 'ok' });
  } finally {
    await api.stop();
  }
}, 90_000);

it('is not fooled by another process holding the port: the API exits and start-up fails', async () => {
  // Accepts connections and hangs up, as a gRPC port does to an HTTP/1 request.
  const foreign = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
  const port = (foreign.address() as net.AddressInfo).port;
  const api = startApi(port);
  try {
    await expect(waitForApi(api.exited, port)).rejects.toThrow(/the API stopped during start-up \(exit code 1\)/);
  } finally {
    await api.stop();
    await new Promise((resolve) => foreign.close(resolve));
  }
}, 90_000);
