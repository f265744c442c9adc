import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDatabase, runSql } from '../dev/databases.js';
import { applyFakesSchema } from '../dev/fakes/schema.js';
import { ensurePrismaClient, migrateDeploy } from '../dev/migrate.js';
import { assertPortsFree } from '../dev/ports.js';
import { startPostgres, type RunningPostgres } from '../dev/postgres.js';
import { startTypeScript, waitForApi } from '../dev/service-processes.js';
import {
  DEV_SERVER_MISSING,
  resolveDevServer,
  resolveTemporalServer,
  TEMPORAL_SERVER_MISSING,
} from '../dev/temporal-binaries.js';
import { startTemporalDevServer } from '../dev/temporal/cli-dev-server.js';
import { freeServerPorts } from '../dev/temporal/server.js';
import { startTemporal } from '../dev/temporal/start.js';
import { BENCH_TEMPORALS, type BenchOptions } from './options.js';
import type { TemporalStore } from './store-size.js';

/**
 * The embedded stack of `npm start`, on the bench's own ports and in a temp directory: PostgreSQL
 * (with pg_stat_statements preloaded), Temporal (`--temporal`), the worker and the API as child
 * processes. The service and the baseline canceller log in as their own roles, so
 * pg_stat_statements tells their statements apart from each other and from the bench's sampling.
 */
export const ROLES = { service: 'bench_service', scan: 'bench_scan', seed: 'bench_seed' } as const;
const DATABASE = 'order_lifecycle_bench';
const TASK_QUEUE = 'orders';

export interface BenchStack {
  /** Superuser URL of the bench database (the bench's own observations). */
  adminUrl: string;
  urlAs(role: string): string;
  temporalAddress: string;
  taskQueue: string;
  apiBase: string;
  /** Where Temporal keeps its state (store-size.ts measures it). */
  temporalStore: TemporalStore;
  /** The top processes of each component (one per worker under "worker"); resources.ts adds up their descendants. */
  pids: Record<string, Array<number | undefined>>;
  stop(): Promise<void>;
}

export async function startBenchStack(options: BenchOptions, log: (line: string) => void): Promise<BenchStack> {
  const { ports } = options;
  // The logs outlive the run (the data directory does not): .bench/logs/.
  const logs = join(options.outDir, 'logs');
  await mkdir(logs, { recursive: true });
  await assertPortsFree([
    { port: ports.postgres, use: 'bench PostgreSQL' },
    { port: ports.temporal, use: 'bench Temporal' },
    { port: ports.temporalUi, use: 'bench Temporal UI' },
    { port: ports.api, use: 'bench API' },
    ...ports.workers.flatMap((w, i) => [
      { port: w.metrics, use: `bench worker ${i + 1} metrics` },
      { port: w.sdkMetrics, use: `bench worker ${i + 1} SDK metrics` },
    ]),
  ]);
  await ensurePrismaClient();
  const root = await mkdtemp(join(tmpdir(), 'order-lifecycle-bench-'));
  await chmod(root, 0o755); // the `postgres` user must reach its data directory inside
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  };
  try {
    log(`PostgreSQL on 127.0.0.1:${ports.postgres} (durable, data in ${root}) …`);
    let postgres = await startBenchPostgres(root, ports.postgres, logs);
    await runSql(postgres.url, `ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await postgres.stop(); // shared_preload_libraries takes effect only at server start
    postgres = await startBenchPostgres(root, ports.postgres, logs);
    stops.push(() => postgres.stop());
    const adminUrl = await ensureDatabase(postgres.url, DATABASE);
    await migrateDeploy(adminUrl);
    await applyFakesSchema(adminUrl);
    await runSql(
      adminUrl,
      [
        'CREATE EXTENSION IF NOT EXISTS pg_stat_statements',
        ...Object.values(ROLES).map((role) => `CREATE ROLE ${role} LOGIN SUPERUSER`),
      ].join(';\n'),
    );
    const urlAs = (role: string) => {
      const url = new URL(adminUrl);
      url.username = role;
      return url.toString();
    };

    log(`${BENCH_TEMPORALS[options.temporal]} on 127.0.0.1:${ports.temporal} …`);
    // The SQLite file of `--temporal sqlite` or `cli` (unused with `postgres`).
    const sqliteFile = join(root, options.temporal === 'cli' ? 'temporal.db' : 'temporal.sqlite');
    const temporalStore: TemporalStore =
      options.temporal === 'postgres' ? { kind: 'postgres' } : { kind: 'sqlite', file: sqliteFile };
    const temporal = await startBenchTemporal(options, sqliteFile, logs, postgres.url);
    stops.push(() => temporal.stop());

    log(`${options.workers === 1 ? 'worker' : `${options.workers} workers`} and API …`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: urlAs(ROLES.service),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      PORT: String(ports.api),
      PAYMENT_WINDOW: `${options.windowS}s`,
      // The safety net must not touch the baseline's orders: give it a grace longer than the run.
      RECONCILE_GRACE: '1h',
      THIRD_PARTIES: 'fake',
      FAULTS_ENABLED: 'false',
      TEMPORAL_SET_CURRENT_VERSION: 'true', // one build: the workers make it current
      LOG_LEVEL: 'warn',
      ...options.serviceEnv,
    };
    const workers = ports.workers.map((w, i) => {
      const name = options.workers === 1 ? 'worker' : `worker-${i + 1}`;
      const worker = startTypeScript(
        name,
        'worker/main.ts',
        { ...env, WORKER_METRICS_PORT: String(w.metrics), TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${w.sdkMetrics}` },
        { logFile: join(logs, `${name}.log`) },
      );
      stops.push(() => worker.stop());
      return worker;
    });
    const api = startTypeScript('API', 'api/server.ts', env, { logFile: join(logs, 'api.log') });
    stops.push(() => api.stop());
    await waitForApi(api.exited, ports.api).catch((err: Error) => {
      throw new Error(`${err.message}; see ${logs}/api.log`);
    });

    return {
      adminUrl,
      urlAs,
      temporalAddress: temporal.address,
      taskQueue: TASK_QUEUE,
      temporalStore,
      apiBase: `http://127.0.0.1:${ports.api}`,
      pids: { postgres: [postgres.pid], temporal: [temporal.pid], worker: workers.map((w) => w.pid), api: [api.pid] },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The Temporal of `--temporal`, with its Web UI (as under `npm start`, so it costs what it costs there). */
async function startBenchTemporal(options: BenchOptions, sqliteFile: string, logs: string, postgresUrl: string) {
  const { ports } = options;
  if (options.temporal === 'cli') {
    const cliPath = await resolveDevServer();
    if (cliPath === undefined) throw new Error(DEV_SERVER_MISSING);
    return startTemporalDevServer({
      cliPath,
      dbFile: sqliteFile,
      port: ports.temporal,
      uiPort: ports.temporalUi,
      namespace: 'default',
      logFile: join(logs, 'temporal.log'),
      tuned: !options.untunedTemporal,
    });
  }
  const binaries = await resolveTemporalServer();
  if (binaries === undefined) throw new Error(TEMPORAL_SERVER_MISSING);
  const temporal = await startTemporal({
    binaries,
    persistence:
      options.temporal === 'sqlite'
        ? { kind: 'sqlite', file: sqliteFile }
        : { kind: 'postgres', adminUrl: postgresUrl },
    ports: await freeServerPorts(ports.temporal),
    uiPort: ports.temporalUi,
    namespace: 'default',
    logDir: logs,
  });
  return { address: temporal.address, pid: temporal.server.running()[0]!.pid, stop: () => temporal.stop() };
}

function startBenchPostgres(root: string, port: number, logs: string): Promise<RunningPostgres> {
  return startPostgres({ dataDir: join(root, 'pg'), port, logFile: join(logs, 'postgres.log'), durable: true });
}
