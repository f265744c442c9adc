import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../managed-process.js';
import { PROJECT_ROOT } from '../paths.js';
import { findFreeLowPort, findFreePort, holdPort, waitForPort } from '../ports.js';
import type { TemporalServerBinaries } from '../temporal-binaries.js';

/**
 * Temporal Server processes from config/server.yaml: all four services in one process, or (the
 * cluster) one process per service, each restartable on its own. The ports are fixed per server
 * so that a restarted service comes back at the address its peers remember.
 */
export const TEMPORAL_SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];

/** Each service's gRPC port and its membership (ringpop) port. */
export type ServerPorts = Record<TemporalService, { grpc: number; membership: number }>;

export type Persistence =
  /** A SQLite file (kept across restarts), or without `file` an in-memory database. */
  | { kind: 'sqlite'; file?: string }
  /** `temporal` and `temporal_visibility` on this PostgreSQL, already set up (schema.ts). */
  | { kind: 'postgres'; host: string; port: number; user: string };

export interface TemporalServerOptions {
  binaries: TemporalServerBinaries;
  persistence: Persistence;
  ports: ServerPorts;
  /** One process per service instead of one for all. */
  cluster: boolean;
  /** Only read when the store is created. */
  historyShards: number;
  /** Each process logs to temporal.log, or temporal-<service>.log in a cluster. */
  logDir: string;
  /** `stock`: none of the project's dynamic config (DYNAMIC_CONFIG), Temporal's defaults; the bench's before. */
  dynamicConfig?: DynamicConfig;
  /** A dynamic config file of the caller's instead (the bench's: the project's with a lever added). */
  dynamicConfigFile?: string;
  /**
   * Variables for the server's processes on top of their own: Go's runtime (GOGC, GOMEMLIMIT) and
   * config/server.yaml's METRICS_PORT (a Prometheus endpoint on loopback, off by default; one
   * process only, as a cluster's would share the port); the bench's `--lever-server-env`.
   */
  processEnv?: Record<string, string>;
}

/** The project's dynamic config (config/dynamic-config.yaml), or none of it: Temporal's defaults. */
export const DYNAMIC_CONFIG = { project: 'dynamic-config.yaml', stock: 'dynamic-config.stock.yaml' } as const;
export type DynamicConfig = keyof typeof DYNAMIC_CONFIG;

const CONFIG_DIR = join(PROJECT_ROOT, 'dev', 'temporal', 'config');
export const dynamicConfigPath = (config: DynamicConfig): string => join(CONFIG_DIR, DYNAMIC_CONFIG[config]);
/** A stopping history service hands its shards over first: give it time before a kill. */
const STOP_GRACE_MS = 20_000;

export class TemporalServer {
  private readonly processes = new Map<string, ManagedProcess>();
  private readonly env: NodeJS.ProcessEnv;

  constructor(private readonly options: TemporalServerOptions) {
    this.env = serverEnv(options);
  }

  /**
   * Starts every process; they find each other through the store's membership table. A cluster's
   * frontend goes first: each process writes the cluster's metadata into a new store at start, and
   * several at once fail on each other's insert. Its port opens once that is done.
   */
  async start(): Promise<void> {
    const [first, ...rest] = this.groups();
    const frontend = this.startGroup(first!);
    if (rest.length === 0) return;
    const opened = await Promise.race([
      waitForPort('127.0.0.1', this.options.ports.frontend.grpc, 60_000),
      frontend.exited.then(() => false),
    ]);
    if (!opened) return; // the caller's readiness check reports the failure with the logs
    for (const group of rest) this.startGroup(group);
  }

  get address(): string {
    return `127.0.0.1:${this.options.ports.frontend.grpc}`;
  }

  /** The running processes by name (`temporal`, or `temporal-<service>` in a cluster). */
  running(): ManagedProcess[] {
    return [...this.processes.values()];
  }

  logFiles(): string[] {
    return this.groups().map((services) => this.logFile(groupName(services)));
  }

  /** Settles when any of its processes ends, saying which and how. */
  firstExit(): Promise<string> {
    return Promise.race(this.running().map((p) => p.exited.then((how) => `${p.name} ${how}`)));
  }

  /** A cluster's service: stop it cleanly (`kill`: SIGKILL), holding its ports until it is started again. */
  async stopService(service: TemporalService, how: 'stop' | 'kill' = 'stop'): Promise<void> {
    const proc = this.processFor(service);
    await (how === 'kill' ? proc.kill() : proc.stop());
    this.processes.delete(proc.name);
    for (const port of Object.values(this.options.ports[service])) await holdPort(port);
  }

  startService(service: TemporalService): ManagedProcess {
    return this.startGroup(this.options.cluster ? [service] : [...TEMPORAL_SERVICES]);
  }

  async stop(): Promise<void> {
    await Promise.all(this.running().map((p) => p.stop()));
    this.processes.clear();
  }

  /** SIGKILL, e.g. a throwaway in-memory server whose state nobody needs. */
  async kill(): Promise<void> {
    await Promise.all(this.running().map((p) => p.kill()));
    this.processes.clear();
  }

  private groups(): TemporalService[][] {
    return this.options.cluster ? TEMPORAL_SERVICES.map((s) => [s]) : [[...TEMPORAL_SERVICES]];
  }

  private logFile(name: string): string {
    return join(this.options.logDir, `${name}.log`);
  }

  private processFor(service: TemporalService): ManagedProcess {
    const proc = this.processes.get(groupName(this.options.cluster ? [service] : TEMPORAL_SERVICES));
    if (!proc) throw new Error(`Temporal ${service} is not running`);
    return proc;
  }

  private startGroup(services: TemporalService[]): ManagedProcess {
    const name = groupName(services);
    const proc = startProcess({
      name,
      command: this.options.binaries.server,
      args: [
        '--config-file',
        join(CONFIG_DIR, 'server.yaml'),
        '--allow-no-auth',
        'start',
        ...services.flatMap((s) => ['--service', s]),
      ],
      env: this.env,
      logFile: this.logFile(name),
      graceMs: STOP_GRACE_MS,
    });
    this.processes.set(name, proc);
    return proc;
  }
}

function groupName(services: readonly TemporalService[]): string {
  return services.length === 1 ? `temporal-${services[0]}` : 'temporal';
}

/**
 * Free loopback ports for every service (tests, chaos and bench run beside other stacks); the
 * frontend's can be given. Membership ports lie below 32768: the PostgreSQL store keeps them in a
 * smallint column.
 */
export async function freeServerPorts(frontendGrpc?: number): Promise<ServerPorts> {
  const ports: Partial<ServerPorts> = {};
  for (const service of TEMPORAL_SERVICES) {
    const grpc = service === 'frontend' && frontendGrpc !== undefined ? frontendGrpc : await findFreePort();
    ports[service] = { grpc, membership: await findFreeLowPort() };
  }
  return ports as ServerPorts;
}

/**
 * What config/server.yaml reads. The server gets nothing else from the caller's environment, so no
 * variable set for the service (LOG_LEVEL, PORT, …) leaks into it.
 */
function serverEnv({
  persistence,
  ports,
  historyShards,
  dynamicConfig,
  dynamicConfigFile,
  processEnv,
}: TemporalServerOptions): NodeJS.ProcessEnv {
  const portVars = Object.fromEntries(
    TEMPORAL_SERVICES.flatMap((s) => [
      [`${s.toUpperCase()}_PORT`, String(ports[s].grpc)],
      [`${s.toUpperCase()}_MEMBERSHIP_PORT`, String(ports[s].membership)],
    ]),
  );
  const persistenceVars =
    persistence.kind === 'sqlite'
      ? { PERSISTENCE: 'sqlite', SQLITE_FILE: persistence.file ?? '', SQLITE_MEMORY_NAME: `temporal-${randomUUID()}` }
      : {
          PERSISTENCE: 'postgres',
          POSTGRES_ADDRESS: `${persistence.host}:${persistence.port}`,
          POSTGRES_USER: persistence.user,
        };
  return {
    PATH: process.env.PATH,
    LOG_LEVEL: 'warn',
    HISTORY_SHARDS: String(historyShards),
    DYNAMIC_CONFIG_FILE: dynamicConfigFile ?? dynamicConfigPath(dynamicConfig ?? 'project'),
    ...portVars,
    ...persistenceVars,
    ...processEnv,
  };
}
