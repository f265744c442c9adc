import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { logTail } from '../log-tail.js';
import { startProcess } from '../managed-process.js';
import { waitForPort } from '../ports.js';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes.js';
import { StartupError } from '../startup-error.js';

/**
 * The Temporal CLI's dev server (Temporal Server 1.29.1, SQLite, one process), kept only so that
 * the benchmark can run the same load on it and on Temporal Server 1.32 (`npm run bench --
 * --temporal cli`), to show what the server version costs or buys.
 */

export interface DevServerOptions {
  cliPath: string;
  /** SQLite file: workflows survive restarts. */
  dbFile: string;
  port: number;
  uiPort: number;
  namespace: string;
  logFile: string;
  /** false: the CLI's own defaults (the benchmark's "before"). */
  tuned?: boolean;
}

/**
 * Measured with `npm run bench` on 2 cores (docs/benchmark.md): together they cut the dev server's
 * CPU per order roughly in half and ended the "context deadline exceeded" failures at 20 orders/s.
 * - The dev server writes through a single SQLite connection, so every workflow's persistence
 *   waits in one line: a write-ahead log without a sync per commit shortens it. A crashed or killed
 *   server loses nothing (the chaos suite restarts it); only an OS crash may lose the last commits,
 *   acceptable for the embedded development stack, never a production store.
 * - One task-queue partition: with the default four, tasks land on partitions no poller waits on
 *   and are stored and forwarded instead of handed over.
 * - Eager activities: the worker completing a workflow task gets the activities it scheduled in the
 *   reply, skipping a round trip through matching.
 */
const DEV_SERVER_TUNING = [
  '--sqlite-pragma',
  'journal_mode=wal',
  '--sqlite-pragma',
  'synchronous=normal',
  '--dynamic-config-value',
  'matching.numTaskqueueReadPartitions=1',
  '--dynamic-config-value',
  'matching.numTaskqueueWritePartitions=1',
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
];

export interface RunningDevServer {
  address: string;
  /** Settles if the server ends, saying how. */
  exited: Promise<string>;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** `temporal server start-dev` with the Web UI and the order search attributes registered. */
export async function startTemporalDevServer(options: DevServerOptions): Promise<RunningDevServer> {
  const server = startProcess({
    name: 'Temporal dev server',
    command: options.cliPath,
    args: [
      'server',
      'start-dev',
      '--db-filename',
      options.dbFile,
      '--ip',
      '127.0.0.1',
      '--port',
      String(options.port),
      '--ui-port',
      String(options.uiPort),
      ...(options.namespace === 'default' ? [] : ['--namespace', options.namespace]),
      ...searchAttributeArgs(),
      '--log-level',
      'warn',
      ...(options.tuned === false ? [] : DEV_SERVER_TUNING),
    ],
    logFile: options.logFile,
    graceMs: 15_000,
  });
  const address = `127.0.0.1:${options.port}`;
  let exit: string | undefined;
  void server.exited.then((how) => (exit = how));
  const deadline = Date.now() + 60_000;
  while (!(await isServing(address, options.namespace))) {
    if (exit !== undefined || Date.now() > deadline) {
      await server.stop();
      throw new StartupError(
        `the Temporal dev server did not start (${exit ?? 'not ready after 60 s'}); ${await logTail(options.logFile)}`,
      );
    }
    await sleep(250);
  }
  if (!(await waitForPort('127.0.0.1', options.uiPort, 30_000))) {
    await server.stop();
    throw new StartupError(
      `the Temporal Web UI did not open port ${options.uiPort}; ${await logTail(options.logFile)}`,
    );
  }
  return { address, exited: server.exited, pid: server.pid, stop: () => server.stop() };
}

/** `--search-attribute Name=Type` for each order search attribute (the CLI registers them at start). */
function searchAttributeArgs(): string[] {
  return SEARCH_ATTRIBUTES.flatMap((key) => [
    '--search-attribute',
    `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`,
  ]);
}

async function isServing(address: string, namespace: string): Promise<boolean> {
  return describeNamespace(address, namespace).then(
    () => true,
    () => false,
  );
}

async function describeNamespace(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } finally {
    await connection.close();
  }
}
