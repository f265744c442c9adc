import { mkdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { devSecretsInUse, loadConfig, requireThirdParties, type Config } from '../lib/config.js';
import { ensurePrismaClient, migrateDeploy } from './migrate.js';
import { DATA_DIR } from './paths.js';
import {
  EMBEDDED,
  embeddedPostgres,
  EMBEDDED_TEMPORAL_PORTS,
  EMBEDDED_TEMPORAL_SQLITE,
  EMBEDDED_TEMPORAL_STORE,
  SECOND_WORKER_METRICS,
} from './embedded.js';
import { applyFakesSchema } from './fakes/schema.js';
import { startTypeScript, waitForApi } from './service-processes.js';
import { assertPortsFree } from './ports.js';
import { assertReachable, ensureDatabase } from './databases.js';
import { startPostgres } from './postgres.js';
import { Stack } from './stack.js';
import { runMain, StartupError } from './startup-error.js';
import { resolveTemporalServer, TEMPORAL_SERVER_MISSING } from './temporal-binaries.js';
import { assertTemporalReachable } from './temporal/namespace.js';
import { TEMPORAL_SERVICES } from './temporal/server.js';
import { startTemporal } from './temporal/start.js';

// `npm start [-- --cluster]`: the whole service on one machine. What the environment does not
// provide (DATABASE_URL, TEMPORAL_ADDRESS) it starts embedded, with state kept in .data/ across
// restarts; then it migrates the database and runs the worker and the API until Ctrl-C.
// `--cluster`: Temporal as one process per service on the embedded PostgreSQL, and two workers.

runMain(async () => {
  const { values } = parseArgs({ options: { cluster: { type: 'boolean', default: false } } });
  const stack = new Stack();
  const stopSignal = onStopSignal();
  const running = startAll(stack, loadConfig(), values.cluster);
  running.catch(() => undefined); // handled below; a stop may win the race first
  const outcome = await Promise.race([running, stopSignal.then((signal) => ({ signal }))]).catch(
    async (err: unknown) => {
      await stack.stopAll();
      throw err;
    },
  );
  if ('signal' in outcome) {
    console.log(`\n${outcome.signal}: stopping.`);
    await stack.stopAll();
    console.log('Stopped.');
    process.exit(0);
  }
  console.error(`error: ${outcome.name} stopped unexpectedly (${outcome.how}); stopping everything.`);
  await stack.stopAll();
  process.exit(1);
});

/** Starts everything, then settles when a service ends on its own. */
async function startAll(stack: Stack, config: Config, cluster: boolean): Promise<{ name: string; how: string }> {
  const embeddedDb = config.databaseUrl === undefined;
  const embeddedTemporal = config.temporal.address === undefined;
  // Check everything that can be wrong before starting anything.
  const thirdParties = requireThirdParties(config);
  // Temporal's store on PostgreSQL is the embedded one's, next to the service's database.
  const temporalOnPostgres = embeddedTemporal && (cluster || EMBEDDED_TEMPORAL_STORE === 'postgres');
  if (temporalOnPostgres && !embeddedDb) {
    throw new StartupError(
      `${cluster ? '--cluster runs' : 'the embedded Temporal keeps'} its store in the embedded PostgreSQL: unset DATABASE_URL${cluster ? ' and TEMPORAL_ADDRESS' : ', or set TEMPORAL_ADDRESS too'}`,
    );
  }
  if (cluster && !embeddedTemporal)
    throw new StartupError('--cluster starts its own Temporal cluster: unset TEMPORAL_ADDRESS');
  await assertPortsFree([
    { port: config.port, use: 'PORT, the API' },
    { port: config.workerMetricsPort, use: "WORKER_METRICS_PORT, the worker's /metrics" },
    { port: portOf(config.sdkMetricsAddress), use: "TEMPORAL_SDK_METRICS_ADDRESS, the worker's SDK metrics" },
    ...(cluster
      ? [
          { port: SECOND_WORKER_METRICS.port, use: "the second worker's /metrics" },
          { port: portOf(SECOND_WORKER_METRICS.sdkAddress), use: "the second worker's SDK metrics" },
        ]
      : []),
    ...(embeddedTemporal
      ? [
          ...TEMPORAL_SERVICES.flatMap((s) => [
            { port: EMBEDDED_TEMPORAL_PORTS[s].grpc, use: `Temporal ${s}` },
            { port: EMBEDDED_TEMPORAL_PORTS[s].membership, use: `Temporal ${s} membership` },
          ]),
          { port: EMBEDDED.temporalUiPort, use: 'Temporal Web UI' },
        ]
      : []),
    ...(embeddedDb ? [{ port: EMBEDDED.postgresPort, use: 'embedded PostgreSQL' }] : []),
  ]);
  if (config.databaseUrl !== undefined) await assertReachable(config.databaseUrl);
  if (config.temporal.address !== undefined)
    await assertTemporalReachable(config.temporal.address, config.temporal.namespace);
  const binaries = embeddedTemporal ? await resolveTemporalServer() : undefined;
  if (embeddedTemporal && binaries === undefined) throw new StartupError(TEMPORAL_SERVER_MISSING);
  await ensurePrismaClient();
  await mkdir(DATA_DIR, { recursive: true });

  let databaseUrl = config.databaseUrl;
  let postgresUrl: string | undefined;
  if (databaseUrl === undefined) {
    const options = embeddedPostgres();
    console.log(`Starting PostgreSQL (data in ${options.dataDir}) …`);
    const postgres = stack.add({
      name: 'PostgreSQL',
      ...(await startPostgres(options)),
    });
    postgresUrl = postgres.url;
    databaseUrl = await ensureDatabase(postgres.url, EMBEDDED.databaseName);
  }
  let temporalAddress = config.temporal.address;
  if (binaries !== undefined) {
    const store = temporalOnPostgres
      ? 'databases temporal and temporal_visibility on the embedded PostgreSQL'
      : '.data/temporal-server.sqlite';
    console.log(
      `Starting ${binaries.title}${cluster ? ` as a cluster (${TEMPORAL_SERVICES.join(', ')}: a process each)` : ''}; store: ${store} …`,
    );
    const temporal = await startTemporal({
      binaries,
      persistence: temporalOnPostgres
        ? { kind: 'postgres', adminUrl: postgresUrl! }
        : { kind: 'sqlite', file: EMBEDDED_TEMPORAL_SQLITE },
      cluster,
      ports: EMBEDDED_TEMPORAL_PORTS,
      uiPort: EMBEDDED.temporalUiPort,
      namespace: config.temporal.namespace,
      logDir: DATA_DIR,
    });
    stack.add({ name: 'Temporal Server', exited: temporal.server.firstExit(), stop: () => temporal.server.stop() });
    stack.add(temporal.webUi!);
    temporalAddress = temporal.address;
  }
  console.log('Applying migrations …');
  await migrateDeploy(databaseUrl);
  await applyFakesSchema(databaseUrl); // THIRD_PARTIES=fake, the only kind there is yet

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    // Decided here, where "embedded" is known: the children see both addresses set.
    THIRD_PARTIES: thirdParties,
    FAULTS_ENABLED: String(config.faultsEnabled),
    // One build runs here: the workers make it the Worker Deployment's current version.
    TEMPORAL_SET_CURRENT_VERSION: 'true',
  };
  if (cluster) {
    stack.add(startTypeScript('worker 1', 'worker/main.ts', env));
    stack.add(
      startTypeScript('worker 2', 'worker/main.ts', {
        ...env,
        WORKER_METRICS_PORT: String(SECOND_WORKER_METRICS.port),
        TEMPORAL_SDK_METRICS_ADDRESS: SECOND_WORKER_METRICS.sdkAddress,
      }),
    );
  } else {
    stack.add(startTypeScript('worker', 'worker/main.ts', env));
  }
  const api = stack.add(startTypeScript('API', 'api/server.ts', env));
  await waitForApi(api.exited, config.port);
  printBanner(config, embeddedDb ? databaseUrl : undefined, embeddedTemporal, cluster);
  return stack.firstExit();
}

function portOf(address: string): number {
  return Number(address.split(':').pop());
}

/**
 * Resolves with the first SIGINT/SIGTERM. Later ones are ignored rather than fatal: one Ctrl-C
 * reaches this process twice (from the terminal, and relayed by npm and tsx), and every service's
 * stop is already bounded by a kill after its grace period.
 */
function onStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.on('SIGINT', resolve);
    process.on('SIGTERM', resolve);
  });
}

function printBanner(
  config: Config,
  embeddedDatabaseUrl: string | undefined,
  embeddedTemporal: boolean,
  cluster: boolean,
): void {
  const lines = [
    '',
    'Order service is running (Ctrl-C stops everything):',
    `  API          http://localhost:${config.port}`,
    `  Health       http://localhost:${config.port}/healthz`,
    `  Orders page  http://localhost:${config.port}/ (sign in with ADMIN_TOKEN)`,
  ];
  if (config.customerTokens.algorithm === 'HS256')
    lines.push('  Customers    `npm run token -- <customerId>` prints a bearer token for curl');
  if (embeddedTemporal) lines.push(`  Temporal UI  http://localhost:${EMBEDDED.temporalUiPort}`);
  if (cluster) {
    const services = TEMPORAL_SERVICES.map((s) => `${s} :${EMBEDDED_TEMPORAL_PORTS[s].grpc}`).join(', ');
    lines.push(
      `  Temporal     cluster: ${services} (logs .data/temporal-<service>.log)`,
      '  Workers      2 replicas on the same task queue',
    );
  }
  if (embeddedDatabaseUrl !== undefined) lines.push(`  Database     ${embeddedDatabaseUrl}`);
  lines.push('  Providers    the local fakes (THIRD_PARTIES=fake): nothing real is paid or sent');
  lines.push(`  Faults       ${config.faultsEnabled ? 'enabled (PUT /admin/faults/:service)' : 'disabled'}`);
  const devSecrets = devSecretsInUse(config);
  if (devSecrets.length > 0)
    lines.push(
      '  Dev secrets (public defaults, never for production):',
      ...devSecrets.map(([name, value]) => `    ${name}=${value}`),
    );
  console.log(lines.join('\n'));
}
