import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { expect, it } from 'vitest';
import { startLocalStack, StopRequested } from '../../dev/local-stack.js';
import { findFreePort } from '../../dev/ports.js';
import { freeServerPorts } from '../../dev/temporal/server.js';

/**
 * `npm start`'s Ctrl-C during the start: the stack's abort signal stops what had started by then.
 * Aborted while the migrations run, the stop takes their database away; the start still fails with
 * StopRequested, and nothing is left running or on disk.
 */
it('an abort during the start stops what had started and fails with StopRequested', async () => {
  const postgresPort = await findFreePort();
  const abort = new AbortController();
  const lines: string[] = [];
  const started = startLocalStack({
    postgres: { kind: 'embedded', port: postgresPort, database: 'abort_check' },
    temporal: { kind: 'server', store: 'sqlite', ports: await freeServerPorts() },
    namespace: 'default',
    apiPort: await findFreePort(),
    workers: 1,
    signal: abort.signal,
    log: (line) => {
      lines.push(line);
      if (line.startsWith('Applying migrations')) abort.abort();
    },
  });
  const err = await started.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StopRequested);
  expect(lines).toContain('Stopping PostgreSQL …');
  expect(lines.some((l) => l.startsWith('Starting Temporal'))).toBe(false);
  expect(await listening(postgresPort)).toBe(false);
  const dataDir = /\(data in (.+)\/postgres\)/.exec(lines.find((l) => l.startsWith('Starting PostgreSQL'))!)![1]!;
  expect(existsSync(dataDir)).toBe(false);
}, 120_000);

it('an aborted signal starts nothing', async () => {
  const lines: string[] = [];
  const err = await startLocalStack({
    postgres: { kind: 'embedded', port: await findFreePort(), database: 'abort_check' },
    temporal: { kind: 'server', store: 'sqlite', ports: await freeServerPorts() },
    namespace: 'default',
    apiPort: await findFreePort(),
    workers: 1,
    signal: AbortSignal.abort(),
    log: (line) => lines.push(line),
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StopRequested);
  expect(lines).toEqual([]);
});

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
