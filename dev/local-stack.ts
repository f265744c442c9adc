import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../lib/config/index.js';
import { assertReachable, databaseUrl, ensureDatabase, ensureSuperuserRoles, runSql } from './databases.js';
import { resolveMailpit, startMailpit, type MailpitPorts, type RunningMailpit } from './mailpit.js';
import type { ManagedProcess } from './managed-process.js';
import { ensurePrismaClient } from './migrate.js';
import { assertPortsFree, findFreePort, holdPort } from './ports.js';
import { durablePostgres, startPostgres, type RunningPostgres } from './postgres.js';
import { prepareServiceDatabase } from './service-database.js';
import { startCompiled, startTypeScript, waitForApi } from './service-processes.js';
import { StartupError } from './startup-error.js';
import {
  DEV_SERVER_MISSING,
  resolveDevServer,
  resolveTemporalServer,
  TEMPORAL_SERVER_MISSING,
  type TemporalServerBinaries,
} from './temporal-binaries.js';
import { startTemporalDevServer, type RunningDevServer } from './temporal/cli-dev-server.js';
import { assertTemporalReachable } from './temporal/namespace.js';
import { TEMPORAL_SERVICES, type DynamicConfig, type ServerPorts, type TemporalService } from './temporal/server.js';
import { startTemporal, type RunningTemporal } from './temporal/start.js';

/**
 * The whole service on one machine, as `npm start`, the bench and chaos run it: PostgreSQL, Temporal,
 * the worker(s) and the API as child processes. Started in that order and stopped in reverse, so
 * nothing loses a dependency while it is still working.
 */

export type LocalPostgres =
  /** The embedded PostgreSQL, its cluster in the data directory. */
  | {
      kind: 'embedded';
      port: number;
      /** The service's database, created when missing. */
      database: string;
      /** Preloads pg_stat_statements and creates the extension in the service's database. */
      statStatements?: boolean;
      /** Login roles created beside the superuser (ensureSuperuserRoles). */
      roles?: readonly string[];
      /** The worker and the API log in as this role (one of `roles`) instead of the superuser. */
      serviceRole?: string;
    }
  /** A server of someone else's (DATABASE_URL): migrated, nothing started. */
  | { kind: 'external'; url: string };

export type LocalTemporal =
  /**
   * Temporal Server 1.32 with the namespace and the search attributes: its store a SQLite file in the
   * data directory, or databases of its own on the embedded PostgreSQL; `cluster`: one process per
   * service (PostgreSQL only). The Web UI with `uiPort`.
   */
  | {
      kind: 'server';
      store: 'sqlite' | 'postgres';
      cluster?: boolean;
      ports: ServerPorts;
      uiPort?: number;
      /** `stock`: Temporal's own dynamic config instead of the project's (the bench's before). */
      dynamicConfig?: DynamicConfig;
      /** A dynamic config file of the caller's instead (the bench's, with a lever added). */
      dynamicConfigFile?: string;
      /** Variables for the server's processes at every start (METRICS_PORT: its Prometheus endpoint). */
      processEnv?: Record<string, string>;
    }
  /** The Temporal CLI's dev server with its Web UI (the bench's before); `tuned`: DEV_SERVER_TUNING. */
  | { kind: 'cli'; port: number; uiPort: number; tuned: boolean }
  /** A server of someone else's (TEMPORAL_ADDRESS): nothing started. */
  | { kind: 'external'; address: string };

/** Where a worker serves its /metrics and the Temporal SDK's metrics. */
export interface WorkerPorts {
  metricsPort: number;
  sdkMetricsAddress: string;
}

export interface LocalStackOptions {
  /** Kept across runs when given (npm start's .data/); otherwise a temp directory that stop() deletes. */
  dataDir?: string;
  /** Where every process logs; the data directory by default. */
  logDir?: string;
  postgres: LocalPostgres;
  temporal: LocalTemporal;
  /** TEMPORAL_NAMESPACE, registered on a server the stack starts. */
  namespace: string;
  /** PORT of the API. */
  apiPort: number;
  /**
   * Mailpit on these ports, started before the workers and the API, which then send the customers'
   * emails through it (SMTP_URL; MAIL_FROM unless the runner's environment sets it).
   */
  mailpit?: MailpitPorts;
  /** The workers started with the stack: their ports, or how many, each on free ports. */
  workers: readonly WorkerPorts[] | number;
  /**
   * `compiled`: the worker and the API run from dist-dev/ (`npm run build:dev`: the image's code with
   * these entries), as the image runs its own; by default from the sources through tsx.
   */
  serviceCode?: 'sources' | 'compiled';
  /** Set for the worker and the API over the runner's environment. */
  serviceEnv?: NodeJS.ProcessEnv;
  /** `terminal`: the worker's and the API's output shares the runner's; by default <logDir>/<name>.log. */
  serviceOutput?: 'terminal' | 'log files';
  /** Progress lines. */
  log: (line: string) => void;
  /** Called for each process that ends without being asked to. */
  onCrash?: (crash: Crash) => void;
  /**
   * Aborting it stops the stack (stop()), whenever it comes: during the start, which then fails
   * with StopRequested once what it had started is stopped, or later (npm start's Ctrl-C).
   */
  signal?: AbortSignal;
}

export interface Crash {
  name: string;
  how: string;
}

/** Thrown into a start that was still running when stop() was called. */
export class StopRequested extends Error {}

/**
 * Starts the stack; a start that fails stops what it had started. One that `signal` stopped fails
 * with StopRequested, whatever the stop made a step fail with (a migration losing its database).
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const stack = new LocalStack(options);
  try {
    await stack.start();
  } catch (err) {
    await stack.stop();
    if (options.signal?.aborted && !(err instanceof StopRequested))
      throw new StopRequested('stopped during start-up', { cause: err });
    throw err;
  }
  return stack;
}

/**
 * The running stack: its addresses, and each piece to stop, kill or start again (the chaos suite's
 * faults). A stopped piece's ports are held until it starts again (dev/ports.ts).
 */
export class LocalStack {
  /** The running workers, oldest first. */
  readonly workers: ManagedProcess[] = [];
  /** Each worker's GET /metrics (its business metrics followed by the Temporal SDK's); read it with workerMetricsHeaders(). */
  readonly workerMetricsUrls = new Map<ManagedProcess, string>();
  /** Processes that ended without being asked to. */
  readonly crashes: Crash[] = [];
  private readonly expectedExits = new Set<Promise<string>>();
  private dir: string | undefined;
  private serverBinaries: TemporalServerBinaries | undefined;
  private cliPath: string | undefined;
  private postgres: RunningPostgres | undefined;
  private temporal: RunningTemporal | RunningDevServer | undefined;
  private api: ManagedProcess | undefined;
  private mailpit: RunningMailpit | undefined;
  private workerCount = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: LocalStackOptions) {
    // A failing stop() is reported where it is awaited: by the caller, or by the start it failed.
    const stopOnAbort = () => void this.stop().catch(() => undefined);
    if (options.signal?.aborted) stopOnAbort();
    else options.signal?.addEventListener('abort', stopOnAbort, { once: true });
  }

  /** Checks everything that can be wrong before starting anything, then starts each piece in order. */
  async start(): Promise<void> {
    const { postgres, temporal, workers } = this.options;
    await this.stopIfStopping();
    await assertPortsFree(this.portsToCheck());
    if (postgres.kind === 'external') await assertReachable(postgres.url);
    if (temporal.kind === 'external') await assertTemporalReachable(temporal.address, this.options.namespace);
    if (temporal.kind === 'server')
      this.serverBinaries = await resolveOrFail(resolveTemporalServer, TEMPORAL_SERVER_MISSING);
    if (temporal.kind === 'cli') this.cliPath = await resolveOrFail(resolveDevServer, DEV_SERVER_MISSING);
    if (this.options.mailpit !== undefined) await resolveMailpit(); // a first run builds it: before anything runs
    await ensurePrismaClient();
    await this.stopIfStopping();
    this.dir = this.options.dataDir ?? (await makeTempDir());
    await mkdir(this.dir, { recursive: true });
    await mkdir(this.logDir, { recursive: true });

    if (postgres.kind === 'embedded') {
      await this.startPostgres();
      await ensureDatabase(this.postgresAdminUrl, postgres.database);
      if (postgres.statStatements) await runSql(this.databaseUrl, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      if (postgres.roles) await ensureSuperuserRoles(this.postgresAdminUrl, postgres.roles);
    }
    this.options.log('Applying migrations …');
    await prepareServiceDatabase(this.databaseUrl);
    await this.startTemporal();
    await this.startMailpit();
    const count = typeof workers === 'number' ? workers : workers.length;
    this.options.log(
      `Starting ${count === 0 ? '' : count === 1 ? 'the worker and ' : `${count} workers and `}the API …`,
    );
    for (let i = 0; i < count; i++) await this.startWorker({}, typeof workers === 'number' ? undefined : workers[i]);
    await this.startApi();
  }

  /** The data directory: state, and logs unless `logDir` says otherwise. */
  get dataDir(): string {
    if (this.dir === undefined) throw new Error('the local stack has not started');
    return this.dir;
  }

  get logDir(): string {
    return this.options.logDir ?? this.dataDir;
  }

  /** The service's database, as the superuser. */
  get databaseUrl(): string {
    const { postgres } = this.options;
    return postgres.kind === 'external' ? postgres.url : databaseUrl(this.postgresAdminUrl, postgres.database);
  }

  /** The service's database, logged in as `role`. */
  databaseUrlAs(role: string): string {
    const url = new URL(this.databaseUrl);
    url.username = role;
    return url.toString();
  }

  get temporalAddress(): string {
    const { temporal } = this.options;
    if (temporal.kind === 'external') return temporal.address;
    return `127.0.0.1:${temporal.kind === 'cli' ? temporal.port : temporal.ports.frontend.grpc}`;
  }

  get temporalUiUrl(): string | undefined {
    const { temporal } = this.options;
    return temporal.kind === 'external' || temporal.uiPort === undefined
      ? undefined
      : `http://localhost:${temporal.uiPort}`;
  }

  /** Temporal's SQLite file, when its store is one. */
  get temporalSqliteFile(): string | undefined {
    const { temporal } = this.options;
    if (temporal.kind === 'cli') return join(this.dataDir, 'temporal.db');
    return temporal.kind === 'server' && temporal.store === 'sqlite'
      ? join(this.dataDir, 'temporal-server.sqlite')
      : undefined;
  }

  /** Mailpit's web UI, where every email the stack sends can be read. */
  get mailpitUrl(): string | undefined {
    const ports = this.options.mailpit;
    return ports === undefined ? undefined : `http://localhost:${ports.http}`;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.options.apiPort}`;
  }

  /** The top processes of each piece (one per worker, one per Temporal service); descendants not included. */
  get pids(): Record<'postgres' | 'temporal' | 'worker' | 'api', Array<number | undefined>> {
    const temporal = this.temporal;
    return {
      postgres: [this.postgres?.pid],
      temporal:
        temporal === undefined
          ? []
          : 'server' in temporal
            ? temporal.server.running().map((p) => p.pid)
            : [temporal.pid],
      worker: this.workers.map((w) => w.pid),
      api: [this.api?.pid],
    };
  }

  async startPostgres(): Promise<void> {
    const { postgres } = this.options;
    if (postgres.kind === 'external') throw new Error('the local stack runs no PostgreSQL of its own');
    const options = {
      ...durablePostgres(this.dataDir, postgres.port, this.logDir),
      ...(postgres.statStatements ? { settings: { shared_preload_libraries: 'pg_stat_statements' } } : {}),
    };
    this.options.log(`Starting PostgreSQL on 127.0.0.1:${postgres.port} (data in ${options.dataDir}) …`);
    this.postgres = await startPostgres(options);
    this.watch({ name: 'PostgreSQL', exited: this.postgres.exited });
    await this.stopIfStopping();
  }

  async stopPostgres(): Promise<void> {
    const postgres = this.postgres;
    this.postgres = undefined;
    if (postgres === undefined) return;
    this.expectedExits.add(postgres.exited);
    await postgres.stop();
    if (this.stopping === undefined) await holdPort(Number(new URL(postgres.url).port));
  }

  /** `processEnv`: more variables for Temporal Server's processes (dev/temporal/server.ts), for this start. */
  async startTemporal(processEnv?: Record<string, string>): Promise<void> {
    const { temporal, namespace } = this.options;
    if (temporal.kind === 'external') return;
    if (temporal.kind === 'cli') {
      this.options.log(`Starting the Temporal CLI's dev server on ${this.temporalAddress} …`);
      this.temporal = await startTemporalDevServer({
        cliPath: this.cliPath!,
        dbFile: this.temporalSqliteFile!,
        port: temporal.port,
        uiPort: temporal.uiPort,
        namespace,
        logFile: join(this.logDir, 'temporal.log'),
        tuned: temporal.tuned,
      });
      this.watch({ name: 'Temporal dev server', exited: this.temporal.exited });
    } else {
      const binaries = this.serverBinaries!;
      const cluster = temporal.cluster ?? false;
      const file = this.temporalSqliteFile;
      this.options.log(
        `Starting ${binaries.title}${cluster ? ` as a cluster (${TEMPORAL_SERVICES.join(', ')}: a process each)` : ''} on ${this.temporalAddress}; store: ${file ?? 'databases temporal and temporal_visibility on the embedded PostgreSQL'} …`,
      );
      const running = await startTemporal({
        binaries,
        persistence:
          file === undefined ? { kind: 'postgres', adminUrl: this.postgresAdminUrl } : { kind: 'sqlite', file },
        cluster,
        ports: temporal.ports,
        uiPort: temporal.uiPort,
        // The Web UI decrypts payloads through this stack's API (its origin is CODEC_CORS_ORIGIN's default).
        uiCodecEndpoint: `http://localhost:${this.options.apiPort}/codec`,
        namespace,
        logDir: this.logDir,
        ...(temporal.dynamicConfig === undefined ? {} : { dynamicConfig: temporal.dynamicConfig }),
        ...(temporal.dynamicConfigFile === undefined ? {} : { dynamicConfigFile: temporal.dynamicConfigFile }),
        processEnv: { ...temporal.processEnv, ...processEnv },
      });
      this.temporal = running;
      for (const proc of [...running.server.running(), ...(running.webUi ? [running.webUi] : [])]) this.watch(proc);
    }
    await this.stopIfStopping();
  }

  private async startMailpit(): Promise<void> {
    const ports = this.options.mailpit;
    if (ports === undefined) return;
    this.options.log(`Starting Mailpit: SMTP on 127.0.0.1:${ports.smtp}, its web UI on ${this.mailpitUrl} …`);
    this.mailpit = await startMailpit({ ports, dataDir: this.dataDir, logFile: join(this.logDir, 'mailpit.log') });
    this.watch({ name: 'Mailpit', exited: this.mailpit.exited });
    await this.stopIfStopping();
  }

  /** Stops every Temporal process (the Web UI too). */
  async stopTemporal(): Promise<void> {
    const temporal = this.temporal;
    this.temporal = undefined;
    if (temporal === undefined) return;
    const processes =
      'server' in temporal ? [...temporal.server.running(), ...(temporal.webUi ? [temporal.webUi] : [])] : [temporal];
    for (const proc of processes) this.expectedExits.add(proc.exited);
    await temporal.stop();
    if (this.stopping === undefined) for (const port of this.temporalPorts()) await holdPort(port);
  }

  /** A cluster's service: SIGKILLed (`kill`) or stopped cleanly; its ports are held until it is started again. */
  async stopTemporalService(service: TemporalService, how: 'kill' | 'stop'): Promise<void> {
    const server = this.temporalServer();
    for (const proc of server.running()) if (proc.name === `temporal-${service}`) this.expectedExits.add(proc.exited);
    await server.stopService(service, how);
  }

  startTemporalService(service: TemporalService): void {
    this.watch(this.temporalServer().startService(service));
  }

  /**
   * Starts one more worker, on `ports` or free ones; `env` is for this worker only. `root`: the
   * compiled service of another checkout (a compiled stack only), for the bench's before and after
   * of a workflow change.
   */
  async startWorker(env: NodeJS.ProcessEnv = {}, ports?: WorkerPorts, root?: string): Promise<ManagedProcess> {
    const n = ++this.workerCount;
    // Each worker serves its own /metrics and SDK exporter: two on one machine need ports of their own.
    const { metricsPort, sdkMetricsAddress } = ports ?? {
      metricsPort: await findFreePort(),
      sdkMetricsAddress: `127.0.0.1:${await findFreePort()}`,
    };
    const worker = this.startService(
      `worker ${n}`,
      'dev/worker.ts',
      {
        ...this.serviceEnv(),
        WORKER_METRICS_PORT: String(metricsPort),
        TEMPORAL_SDK_METRICS_ADDRESS: sdkMetricsAddress,
        ...env,
      },
      { ...this.outputOf(`worker-${n}`), root },
    );
    this.workers.push(worker);
    this.workerMetricsUrls.set(worker, `http://127.0.0.1:${metricsPort}/metrics`);
    this.watch(worker);
    void worker.exited.then(() => this.workers.splice(this.workers.indexOf(worker), 1));
    await this.stopIfStopping();
    return worker;
  }

  /**
   * The credentials the workers' /metrics take: their METRICS_TOKEN, else their admin token, as
   * their own configuration reads them from the environment the stack gives them.
   */
  workerMetricsHeaders(): Record<string, string> {
    const config = loadConfig(this.serviceEnv());
    return { authorization: `Bearer ${config.metricsToken ?? config.adminToken}` };
  }

  /** SIGKILL, no clean shutdown: what a crashed machine or an OOM kill does to a worker. */
  async killWorker(worker: ManagedProcess): Promise<string> {
    this.expectedExits.add(worker.exited);
    return worker.kill();
  }

  /** A clean stop (SIGTERM: in-flight tasks drain). */
  async stopWorker(worker: ManagedProcess): Promise<void> {
    this.expectedExits.add(worker.exited);
    await worker.stop();
  }

  /**
   * Stops everything it started, in reverse order; safe to call twice, during start() (which then
   * fails with StopRequested) and after a failed start. `keepFiles`: a temp data directory is kept.
   */
  stop(options: { keepFiles?: boolean } = {}): Promise<void> {
    this.stopping ??= (async () => {
      await this.stopPieces(this.options.log);
      if (this.options.dataDir === undefined && this.dir !== undefined && !options.keepFiles)
        await rm(this.dir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  private async stopPieces(log: (line: string) => void): Promise<void> {
    const api = this.api;
    this.api = undefined;
    if (api) {
      log('Stopping the API …');
      await api.stop();
    }
    if (this.workers.length > 0) {
      log(`Stopping ${this.workers.map((w) => w.name).join(', ')} …`);
      await Promise.all([...this.workers].map((w) => w.stop()));
    }
    const mailpit = this.mailpit;
    this.mailpit = undefined;
    if (mailpit) {
      log('Stopping Mailpit …');
      this.expectedExits.add(mailpit.exited);
      await mailpit.stop();
    }
    if (this.temporal) log('Stopping Temporal …');
    await this.stopTemporal();
    if (this.postgres) log('Stopping PostgreSQL …');
    await this.stopPostgres();
  }

  /**
   * Stops the API cleanly and starts it again on its port, from `root`'s compiled service (another
   * checkout: the bench's before and after of a change to the API) or this one's.
   */
  async restartApi(root?: string): Promise<void> {
    if (this.api) {
      this.expectedExits.add(this.api.exited);
      await this.api.stop();
    }
    await this.startApi(root);
  }

  /** SIGKILL, no clean shutdown: requests in flight get no answer; its port is held until startApi(). */
  async killApi(): Promise<string> {
    const api = this.api;
    if (api === undefined) throw new Error('the API is not running');
    this.api = undefined;
    this.expectedExits.add(api.exited);
    const how = await api.kill();
    if (this.stopping === undefined) await holdPort(this.options.apiPort);
    return how;
  }

  /** Starts the API on its port, from `root`'s compiled service (another checkout) or this one's. */
  async startApi(root?: string): Promise<void> {
    const output = this.outputOf('api');
    const api = this.startService('API', 'dev/api.ts', this.serviceEnv(), { ...output, root });
    this.api = api;
    this.watch(api);
    await this.stopIfStopping();
    await waitForApi(api.exited, this.options.apiPort).catch(async (err: Error) => {
      await this.stopIfStopping(); // the API ended because stop() stopped it
      throw output.logFile === undefined ? err : new StartupError(`${err.message}; see ${output.logFile}`);
    });
    await this.stopIfStopping();
  }

  private startService(
    name: string,
    entry: string,
    env: NodeJS.ProcessEnv,
    { root, ...output }: { logFile?: string; root?: string },
  ) {
    if (this.options.serviceCode === 'compiled') return startCompiled(name, entry, env, { ...output, root });
    if (root !== undefined) throw new Error(`${name}: another checkout's service runs compiled only`);
    return startTypeScript(name, entry, env, output);
  }

  private serviceEnv(): NodeJS.ProcessEnv {
    const { postgres, temporal } = this.options;
    // Only a stack that runs both its PostgreSQL and its Temporal is the embedded one, where the
    // public development secrets may stand in (lib/config/secrets.ts); blank means unset, whatever the runner had.
    const embedded = postgres.kind === 'embedded' && temporal.kind !== 'external';
    return {
      ...process.env,
      ...this.options.serviceEnv,
      EMBEDDED_STACK: embedded ? 'true' : '',
      DATABASE_URL:
        postgres.kind === 'embedded' && postgres.serviceRole !== undefined
          ? this.databaseUrlAs(postgres.serviceRole)
          : this.databaseUrl,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: this.options.namespace,
      PORT: String(this.options.apiPort),
      ...(this.options.mailpit === undefined
        ? {}
        : {
            SMTP_URL: `smtp://127.0.0.1:${this.options.mailpit.smtp}`,
            MAIL_FROM: process.env.MAIL_FROM || 'Order service <orders@shop.example>',
          }),
    };
  }

  private outputOf(name: string): { logFile?: string } {
    return this.options.serviceOutput === 'terminal' ? {} : { logFile: join(this.logDir, `${name}.log`) };
  }

  /** Records a process that ends on its own: not stopped or killed by the stack, nor during stop(). */
  private watch(proc: { name: string; exited: Promise<string> }): void {
    void proc.exited.then((how) => {
      if (this.expectedExits.has(proc.exited) || this.stopping !== undefined) return;
      const crash = { name: proc.name, how };
      this.crashes.push(crash);
      this.options.log(`!! ${proc.name} ended on its own (${how}); logs in ${this.logDir}`);
      this.options.onCrash?.(crash);
    });
  }

  /**
   * After each start step: a stop() that came meanwhile went past this step's piece, so stop it here,
   * once that stop() is done (two at once would each stop a part, and stop() could report done early).
   */
  private async stopIfStopping(): Promise<void> {
    if (this.stopping === undefined) return;
    await this.stopping.catch(() => undefined);
    await this.stopPieces(this.options.log);
    throw new StopRequested('stopped during start-up');
  }

  private temporalServer() {
    const temporal = this.temporal;
    if (temporal === undefined || !('server' in temporal)) throw new Error('Temporal Server is not running');
    return temporal.server;
  }

  private get postgresAdminUrl(): string {
    const { postgres } = this.options;
    if (postgres.kind === 'external') throw new Error('the local stack runs no PostgreSQL of its own');
    return `postgresql://postgres@127.0.0.1:${postgres.port}/postgres`;
  }

  private temporalPorts(): number[] {
    const { temporal } = this.options;
    if (temporal.kind === 'external') return [];
    if (temporal.kind === 'cli') return [temporal.port, temporal.uiPort];
    return [
      ...TEMPORAL_SERVICES.flatMap((s) => [temporal.ports[s].grpc, temporal.ports[s].membership]),
      ...(temporal.uiPort === undefined ? [] : [temporal.uiPort]),
    ];
  }

  /** Every port the stack will listen on, named by the setting that moves it where there is one. */
  private portsToCheck(): Array<{ port: number; use: string }> {
    const { postgres, temporal, workers } = this.options;
    return [
      { port: this.options.apiPort, use: 'PORT, the API' },
      ...(typeof workers === 'number' ? [] : workers).flatMap((w, i) => [
        { port: w.metricsPort, use: `WORKER_METRICS_PORT, worker ${i + 1}'s /metrics` },
        { port: portOf(w.sdkMetricsAddress), use: `TEMPORAL_SDK_METRICS_ADDRESS, worker ${i + 1}'s SDK metrics` },
      ]),
      ...(temporal.kind === 'server'
        ? TEMPORAL_SERVICES.flatMap((s) => [
            { port: temporal.ports[s].grpc, use: `Temporal ${s}` },
            { port: temporal.ports[s].membership, use: `Temporal ${s} membership` },
          ])
        : temporal.kind === 'cli'
          ? [{ port: temporal.port, use: 'Temporal dev server' }]
          : []),
      ...(temporal.kind !== 'external' && temporal.uiPort !== undefined
        ? [{ port: temporal.uiPort, use: 'Temporal Web UI' }]
        : []),
      ...(postgres.kind === 'embedded' ? [{ port: postgres.port, use: 'embedded PostgreSQL' }] : []),
      ...(this.options.mailpit === undefined
        ? []
        : [
            { port: this.options.mailpit.smtp, use: 'Mailpit SMTP' },
            { port: this.options.mailpit.http, use: "Mailpit's web UI" },
          ]),
    ];
  }
}

async function resolveOrFail<T>(resolve: () => Promise<T | undefined>, missing: string): Promise<T> {
  const found = await resolve();
  if (found === undefined) throw new StartupError(missing);
  return found;
}

async function makeTempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'order-lifecycle-stack-'));
  await chmod(dir, 0o755); // the `postgres` user must reach its data directory inside
  return dir;
}

function portOf(address: string): number {
  return Number(address.split(':').pop());
}
