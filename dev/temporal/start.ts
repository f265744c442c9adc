import { join } from 'node:path';
import { logTail } from '../log-tail.js';
import type { ManagedProcess } from '../managed-process.js';
import { StartupError } from '../startup-error.js';
import type { TemporalServerBinaries } from '../temporal-binaries.js';
import { ensureNamespace, type Registered } from './namespace.js';
import { prepareTemporalDatabases } from './schema.js';
import { TemporalServer, type DynamicConfig, type ServerPorts } from './server.js';
import { startWebUi } from './web-ui.js';

/**
 * A ready Temporal Server: its store prepared, the namespace and the order search attributes
 * registered, and with `uiPort` the Web UI. What `npm start`, the tests, chaos and bench run.
 */
export interface TemporalOptions {
  binaries: TemporalServerBinaries;
  /** A SQLite file (without `file`: in memory), or the PostgreSQL server of this superuser URL. */
  persistence: { kind: 'sqlite'; file?: string } | { kind: 'postgres'; adminUrl: string };
  ports: ServerPorts;
  /** The Web UI's port; none: no Web UI. */
  uiPort?: number | undefined;
  /** The codec server the Web UI decodes payloads with (the API's `/codec`), sent the browser's cookies. */
  uiCodecEndpoint?: string | undefined;
  /** One process per service (PostgreSQL only: SQLite cannot be shared between processes). */
  cluster?: boolean;
  namespace: string;
  /** Where the processes' logs go. */
  logDir: string;
  /** The project's dynamic config (the default) or Temporal's stock settings (server.ts). */
  dynamicConfig?: DynamicConfig;
  /** A dynamic config file of the caller's instead (server.ts). */
  dynamicConfigFile?: string;
  /** More variables for the server's processes (server.ts). */
  processEnv?: Record<string, string>;
}

export interface RunningTemporal {
  address: string;
  server: TemporalServer;
  webUi: ManagedProcess | undefined;
  /** What this start had to register: nothing when the store kept the namespace and the attributes. */
  registered: Registered;
  stop(): Promise<void>;
}

/**
 * History shards, fixed when a store is created. SQLite writes through one connection, so more
 * shards only add work; on PostgreSQL, four let the cluster's history service spread its load.
 */
const HISTORY_SHARDS = { sqlite: 1, postgres: 4 } as const;

export async function startTemporal(options: TemporalOptions): Promise<RunningTemporal> {
  const { binaries, persistence, logDir } = options;
  if (options.cluster && persistence.kind !== 'postgres')
    throw new Error('a Temporal cluster needs PostgreSQL persistence');
  if (persistence.kind === 'postgres')
    await prepareTemporalDatabases(binaries.sqlTool, persistence.adminUrl, join(logDir, 'temporal-schema.log'));
  const server = new TemporalServer({
    binaries,
    persistence: persistence.kind === 'sqlite' ? persistence : postgresLogin(persistence.adminUrl),
    ports: options.ports,
    cluster: options.cluster ?? false,
    historyShards: HISTORY_SHARDS[persistence.kind],
    logDir,
    ...(options.dynamicConfig === undefined ? {} : { dynamicConfig: options.dynamicConfig }),
    ...(options.dynamicConfigFile === undefined ? {} : { dynamicConfigFile: options.dynamicConfigFile }),
    ...(options.processEnv === undefined ? {} : { processEnv: options.processEnv }),
  });
  await server.start();
  let webUi: ManagedProcess | undefined;
  let registered: Registered;
  try {
    registered = await ensureNamespace(server.address, options.namespace, server.firstExit());
    if (options.uiPort !== undefined) {
      webUi = await startWebUi({
        uiServer: binaries.uiServer,
        port: options.uiPort,
        temporalAddress: server.address,
        namespace: options.namespace,
        codecEndpoint: options.uiCodecEndpoint,
        logFile: join(logDir, 'temporal-ui.log'),
      });
    }
  } catch (err) {
    // The server logs JSON lines with stack traces: the start of each line says what went wrong.
    const logs = await Promise.all(
      server.logFiles().map(async (file) => (await logTail(file, 8)).replace(/^(.{300}).+$/gm, '$1 …')),
    );
    await server.stop();
    throw err instanceof StartupError ? new StartupError(`${err.message}; ${logs.join('\n')}`) : err;
  }
  return {
    address: server.address,
    server,
    webUi,
    registered,
    async stop() {
      await webUi?.stop();
      await server.stop();
    },
  };
}

function postgresLogin(adminUrl: string) {
  const { hostname, port, username } = new URL(adminUrl);
  return { kind: 'postgres' as const, host: hostname, port: Number(port || 5432), user: decodeURIComponent(username) };
}
