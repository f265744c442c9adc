import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDatabase, runSql } from '../dev/databases.js';
import { startProcess, type ManagedProcess } from '../dev/managed-process.js';
import { ensurePrismaClient, migrateDeploy } from '../dev/migrate.js';
import { PROJECT_ROOT } from '../dev/paths.js';
import { assertPortsFree } from '../dev/ports.js';
import { startPostgres, type RunningPostgres } from '../dev/postgres.js';
import { waitForApi } from '../dev/service-processes.js';
import { DEV_SERVER_MISSING, resolveDevServer } from '../dev/temporal-binaries.js';
import { startTemporalDevServer, type RunningTemporal } from '../dev/temporal-server.js';
import type { BenchOptions } from './options.js';
import { childPids, readProcStats } from './proc.js';

/**
 * The embedded stack of `npm start`, on the bench's own ports and in a temp directory: PostgreSQL
 * (with pg_stat_statements preloaded), the Temporal dev server, the worker and the API as child
 * processes. The service and the baseline canceller log in as their own roles, so
 * pg_stat_statements tells their statements apart from each other and from the bench's sampling.
 */
export const ROLES = { service: 'bench_service', scan: 'bench_scan', seed: 'bench_seed' } as const;
const DATABASE = 'order_lifecycle_bench';
const TASK_QUEUE = 'orders';

export interface BenchStack {
  root: string;
  /** Superuser URL of the bench database (the bench's own observations). */
  adminUrl: string;
  urlAs(role: string): string;
  temporalAddress: string;
  taskQueue: string;
  apiBase: string;
  /** Process-group leaders of each component, for /proc accounting. */
  pids(): Record<string, number>;
  restartService(env: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

interface Child extends ManagedProcess {
  pid: number;
}

export async function startBenchStack(options: BenchOptions, log: (line: string) => void): Promise<BenchStack> {
  const { ports } = options;
  // The logs outlive the run (the data directory does not): .bench/logs/.
  const logs = join(PROJECT_ROOT, options.outDir, 'logs');
  await mkdir(logs, { recursive: true });
  await assertPortsFree([
    { port: ports.postgres, use: 'bench PostgreSQL' },
    { port: ports.temporal, use: 'bench Temporal' },
    { port: ports.temporalUi, use: 'bench Temporal UI' },
    { port: ports.api, use: 'bench API' },
  ]);
  const cliPath = await resolveDevServer();
  if (cliPath === undefined) throw new Error(DEV_SERVER_MISSING);
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
    await runSql(adminUrl, [
      'CREATE EXTENSION IF NOT EXISTS pg_stat_statements',
      ...Object.values(ROLES).map((role) => `CREATE ROLE ${role} LOGIN SUPERUSER`),
    ].join(';\n'));
    const urlAs = (role: string) => {
      const url = new URL(adminUrl);
      url.username = role;
      return url.toString();
    };

    log(`Temporal dev server on 127.0.0.1:${ports.temporal} …`);
    const temporal: RunningTemporal = await startTemporalDevServer({
      cliPath,
      dbFile: join(root, 'temporal.db'),
      port: ports.temporal,
      uiPort: ports.temporalUi,
      namespace: 'default',
      logFile: join(logs, 'temporal.log'),
      tuned: !options.untunedTemporal,
    });
    stops.push(() => temporal.stop());

    let service: { worker: Child; api: Child } | undefined;
    const startService = async (extra: Record<string, string>) => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: urlAs(ROLES.service),
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_TASK_QUEUE: TASK_QUEUE,
        PORT: String(ports.api),
        PAYMENT_WINDOW: `${options.windowS}s`,
        // The safety net must not touch the baseline's orders: give it a grace longer than the run.
        RECONCILE_GRACE: '1h',
        FAULTS_ENABLED: 'false',
        LOG_LEVEL: 'warn',
        ...options.serviceEnv,
        ...extra,
      };
      const worker = startChild('worker', 'worker/main.ts', env, join(logs, 'worker.log'));
      const api = startChild('API', 'api/server.ts', env, join(logs, 'api.log'));
      service = { worker, api };
      await waitForApi(api.exited, ports.api).catch((err: Error) => {
        throw new Error(`${err.message}; see ${logs}/api.log`);
      });
    };
    const stopService = async () => {
      if (!service) return;
      await service.api.stop();
      await service.worker.stop();
      service = undefined;
    };
    log('worker and API …');
    await startService({});
    stops.push(stopService);

    return {
      root,
      adminUrl,
      urlAs,
      temporalAddress: temporal.address,
      taskQueue: TASK_QUEUE,
      apiBase: `http://127.0.0.1:${ports.api}`,
      pids: () => ({
        postgres: childPid(process.pid, 'postgres'),
        temporal: childPid(process.pid, 'temporal'),
        worker: service?.worker.pid ?? 0,
        api: service?.api.pid ?? 0,
      }),
      async restartService(env) {
        await stopService();
        await startService(env);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function startBenchPostgres(root: string, port: number, logs: string): Promise<RunningPostgres> {
  return startPostgres({ dataDir: join(root, 'pg'), port, logFile: join(logs, 'postgres.log'), durable: true });
}

function startChild(name: string, entry: string, env: NodeJS.ProcessEnv, logFile: string): Child {
  const before = new Set(childPids(process.pid));
  const child = startProcess({ name, command: process.execPath, args: ['--import', 'tsx', entry], cwd: PROJECT_ROOT, env, logFile, graceMs: 15_000 });
  const pid = childPids(process.pid).find((p) => !before.has(p)) ?? 0;
  return Object.assign(child, { pid });
}

function childPid(parent: number, command: string): number {
  return readProcStats().find((s) => s.ppid === parent && s.comm === command)?.pid ?? 0;
}
