import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDatabase } from '../databases.js';
import { applyFakesSchema } from '../fakes/schema.js';
import { migrateDeploy } from '../migrate.js';
import type { ManagedProcess } from '../managed-process.js';
import { findFreePort, holdPort } from '../ports.js';
import { startPostgres, type RunningPostgres } from '../postgres.js';
import { startTypeScript, waitForApi } from '../service-processes.js';
import { StartupError } from '../startup-error.js';
import { resolveTemporalServer, TEMPORAL_SERVER_MISSING, type TemporalServerBinaries } from '../temporal-binaries.js';
import { freeServerPorts, TEMPORAL_SERVICES, type ServerPorts, type TemporalService } from '../temporal/server.js';
import { startTemporal, type RunningTemporal } from '../temporal/start.js';

export const CHAOS_SECRETS = {
  webhookSecret: 'chaos-webhook-secret',
  adminToken: 'chaos-admin-token',
  customerJwtSecret: 'chaos-customer-jwt-secret-0123456789',
  orderIdSecret: 'chaos-order-id-secret-0123456789abcdef',
} as const;
const TASK_QUEUE = 'orders-chaos';

export interface ChaosStackOptions {
  /** PAYMENT_WINDOW of the workers (the API does not use it). */
  paymentWindow: string;
  /** Temporal as one process per service with its store in the PostgreSQL, as `npm start -- --cluster` runs it. */
  cluster: boolean;
}

/**
 * The whole service on loopback, in a temp directory, on free ports: a durable PostgreSQL and
 * Temporal Server as `npm start` runs it (on its SQLite file, or as a cluster on the PostgreSQL;
 * restartable on its data), the worker(s) and the API as child processes. Every piece is the
 * project's own; only the ports and paths are chaos's.
 */
export class ChaosStack {
  readonly workers: ManagedProcess[] = [];
  /** Each worker's GET /metrics (its business metrics followed by the Temporal SDK's). */
  readonly workerMetricsUrls = new Map<ManagedProcess, string>();
  /** Service processes that ended without being asked to: each is a finding. */
  readonly crashes: string[] = [];
  private readonly expectedExits = new Set<ManagedProcess>();
  private postgres: RunningPostgres | undefined;
  private temporal: RunningTemporal | undefined;
  private api: ManagedProcess | undefined;
  private workerCount = 0;
  private stopped = false;

  private constructor(
    readonly root: string,
    private readonly ports: { postgres: number; temporal: ServerPorts; api: number },
    private readonly binaries: TemporalServerBinaries,
    readonly cluster: boolean,
    private paymentWindow: string,
  ) {}

  static async start(options: ChaosStackOptions): Promise<ChaosStack> {
    const binaries = await resolveTemporalServer();
    if (binaries === undefined) throw new StartupError(TEMPORAL_SERVER_MISSING);
    const root = await mkdtemp(join(tmpdir(), 'order-lifecycle-chaos-'));
    await chmod(root, 0o755); // the `postgres` user must reach its data directory inside
    const ports = { postgres: await findFreePort(), temporal: await freeServerPorts(), api: await findFreePort() };
    const stack = new ChaosStack(root, ports, binaries, options.cluster, options.paymentWindow);
    try {
      await stack.startPostgres();
      await migrateDeploy(stack.databaseUrl);
      await applyFakesSchema(stack.databaseUrl);
      await stack.startTemporal();
      // As `npm start` runs them: two worker replicas beside a cluster, one otherwise.
      for (let i = 0; i < (options.cluster ? 2 : 1); i++) await stack.startWorker();
      await stack.startApi();
    } catch (err) {
      await stack.stop();
      throw err;
    }
    return stack;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.ports.api}`;
  }

  get databaseUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.ports.postgres}/chaos`;
  }

  get temporalAddress(): string {
    return `127.0.0.1:${this.ports.temporal.frontend.grpc}`;
  }

  get taskQueue(): string {
    return TASK_QUEUE;
  }

  async startPostgres(): Promise<void> {
    this.postgres = await startPostgres({
      dataDir: join(this.root, 'postgres'),
      port: this.ports.postgres,
      logFile: join(this.root, 'postgres.log'),
      durable: true,
    });
    await ensureDatabase(this.postgres.url, 'chaos');
  }

  /** Stops PostgreSQL; mid-run (a fault), its port is held until it starts again (dev/ports.ts). */
  async stopPostgres(): Promise<void> {
    await this.postgres?.stop();
    this.postgres = undefined;
    if (!this.stopped) await holdPort(this.ports.postgres);
  }

  async startTemporal(): Promise<void> {
    this.temporal = await startTemporal({
      binaries: this.binaries,
      persistence: this.cluster
        ? { kind: 'postgres', adminUrl: this.postgres!.url }
        : { kind: 'sqlite', file: join(this.root, 'temporal.sqlite') },
      cluster: this.cluster,
      ports: this.ports.temporal,
      namespace: 'default',
      logDir: this.root,
    });
    for (const service of this.temporal.server.running()) this.watch(service);
  }

  /** Stops every Temporal process; mid-run, their ports are held until they start again. */
  async stopTemporal(): Promise<void> {
    const temporal = this.temporal;
    this.temporal = undefined;
    for (const service of temporal?.server.running() ?? []) this.expectedExits.add(service);
    await temporal?.stop();
    if (!this.stopped)
      for (const service of TEMPORAL_SERVICES)
        for (const port of Object.values(this.ports.temporal[service])) await holdPort(port);
  }

  /** A cluster's service: SIGKILLed (`kill`) or stopped cleanly; its ports are held until it is started again. */
  async stopTemporalService(service: TemporalService, how: 'kill' | 'stop'): Promise<void> {
    const server = this.temporal!.server;
    for (const proc of server.running()) if (proc.name === `temporal-${service}`) this.expectedExits.add(proc);
    await server.stopService(service, how);
  }

  startTemporalService(service: TemporalService): void {
    this.watch(this.temporal!.server.startService(service));
  }

  /** Starts one more worker; later workers get the window given here (the storm uses a longer one). */
  async startWorker(paymentWindow = this.paymentWindow): Promise<ManagedProcess> {
    this.paymentWindow = paymentWindow;
    const n = ++this.workerCount;
    // Each worker serves its own /metrics and SDK exporter: two on one machine need ports of their own.
    const [metricsPort, sdkMetricsPort] = [await findFreePort(), await findFreePort()];
    const env = {
      ...this.env(),
      WORKER_METRICS_PORT: String(metricsPort),
      TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkMetricsPort}`,
    };
    const worker = startTypeScript(`worker ${n}`, 'worker/main.ts', env, {
      logFile: join(this.root, `worker-${n}.log`),
    });
    this.workers.push(worker);
    this.workerMetricsUrls.set(worker, `http://127.0.0.1:${metricsPort}/metrics`);
    this.watch(worker);
    void worker.exited.then(() => this.workers.splice(this.workers.indexOf(worker), 1));
    return worker;
  }

  /** SIGKILL, no clean shutdown: what a crashed machine or an OOM kill does to the worker. */
  async killWorker(worker: ManagedProcess): Promise<string> {
    this.expectedExits.add(worker);
    return worker.kill();
  }

  /** A clean stop (SIGTERM: in-flight tasks drain), e.g. to restart the workers with another window. */
  async stopWorker(worker: ManagedProcess): Promise<void> {
    this.expectedExits.add(worker);
    await worker.stop();
  }

  private watch(service: ManagedProcess): void {
    void service.exited.then((how) => {
      if (this.expectedExits.has(service) || this.stopped) return;
      this.crashes.push(`${service.name} ${how}`);
      console.log(`!! ${service.name} ended on its own (${how}); its log is in ${this.root}`);
    });
  }

  private async startApi(): Promise<void> {
    this.api = startTypeScript('API', 'api/server.ts', this.env(), { logFile: join(this.root, 'api.log') });
    this.watch(this.api);
    await waitForApi(this.api.exited, this.ports.api);
  }

  private env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: this.databaseUrl,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      PORT: String(this.ports.api),
      PAYMENT_WINDOW: this.paymentWindow,
      PAYMENT_WEBHOOK_SECRET: CHAOS_SECRETS.webhookSecret,
      ADMIN_TOKEN: CHAOS_SECRETS.adminToken,
      CUSTOMER_JWT_SECRET: CHAOS_SECRETS.customerJwtSecret,
      ORDER_ID_SECRET: CHAOS_SECRETS.orderIdSecret,
      // The load's 20 customers (the storm's 50) each place many orders a minute and leave a quarter
      // unpaid: the anti-hoarding limits would refuse them, and they are not what chaos tests.
      MAX_OPEN_ORDERS_PER_CUSTOMER: '0',
      ORDERS_PER_MINUTE_PER_CLIENT: '0',
      THIRD_PARTIES: 'fake',
      FAULTS_ENABLED: 'true',
      TEMPORAL_SET_CURRENT_VERSION: 'true', // one build: the workers make it current
      LOG_LEVEL: 'warn',
    };
  }

  /** The last lines of every process's log: what a failed run shows where its temp directory is gone (CI). */
  async logTails(lines = 15): Promise<string> {
    const logs = (await readdir(this.root)).filter((f) => f.endsWith('.log')).sort();
    const tails = await Promise.all(
      logs.map(async (file) => {
        const text = (await readFile(join(this.root, file), 'utf8')).trimEnd();
        if (text === '') return `--- ${file} (empty)`;
        const tail = text.split('\n').slice(-lines);
        return `--- ${file} (last ${tail.length} lines)\n${tail.join('\n')}`;
      }),
    );
    return tails.join('\n');
  }

  /** Stops everything it started, in reverse order; safe to call twice and after a failed start. */
  async stop(options: { keepFiles?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.api?.stop();
    await Promise.all([...this.workers].map((w) => w.stop()));
    await this.stopTemporal();
    await this.stopPostgres();
    if (!options.keepFiles) await rm(this.root, { recursive: true, force: true });
  }
}
