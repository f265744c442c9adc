import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { devSecretsInUse, loadConfig, requireThirdParties, type Config } from '../lib/config.js';
import { ensurePrismaClient, migrateDeploy } from './migrate.js';
import { DATA_DIR } from './paths.js';
import { EMBEDDED, embeddedPostgres } from './embedded.js';
import { applyFakesSchema } from './fakes/schema.js';
import { startTypeScript, waitForApi } from './service-processes.js';
import { assertPortsFree } from './ports.js';
import { assertReachable, ensureDatabase } from './databases.js';
import { startPostgres } from './postgres.js';
import { Stack } from './stack.js';
import { runMain, StartupError } from './startup-error.js';
import { DEV_SERVER_MISSING, resolveDevServer } from './temporal-binaries.js';
import { assertTemporalReachable, startTemporalDevServer } from './temporal-server.js';

// `npm start`: the whole service on one machine. What the environment does not provide
// (DATABASE_URL, TEMPORAL_ADDRESS) it starts embedded, with state kept in .data/ across restarts;
// then it migrates the database and runs the worker and the API until Ctrl-C.

runMain(async () => {
  const stack = new Stack();
  const stopSignal = onStopSignal();
  const running = startAll(stack, loadConfig());
  running.catch(() => undefined); // handled below; a stop may win the race first
  const outcome = await Promise.race([running, stopSignal.then((signal) => ({ signal }))]).catch(async (err: unknown) => {
    await stack.stopAll();
    throw err;
  });
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
async function startAll(stack: Stack, config: Config): Promise<{ name: string; how: string }> {
  const embeddedDb = config.databaseUrl === undefined;
  const embeddedTemporal = config.temporal.address === undefined;
  // Check everything that can be wrong before starting anything.
  const thirdParties = requireThirdParties(config);
  await assertPortsFree([
    { port: config.port, use: 'PORT, the API' },
    { port: config.workerMetricsPort, use: "WORKER_METRICS_PORT, the worker's /metrics" },
    { port: Number(config.sdkMetricsAddress.split(':').pop()), use: "TEMPORAL_SDK_METRICS_ADDRESS, the worker's SDK metrics" },
    ...(embeddedTemporal
      ? [{ port: EMBEDDED.temporalPort, use: 'Temporal dev server' }, { port: EMBEDDED.temporalUiPort, use: 'Temporal Web UI' }]
      : []),
    ...(embeddedDb ? [{ port: EMBEDDED.postgresPort, use: 'embedded PostgreSQL' }] : []),
  ]);
  if (config.databaseUrl !== undefined) await assertReachable(config.databaseUrl);
  if (config.temporal.address !== undefined) await assertTemporalReachable(config.temporal.address, config.temporal.namespace);
  const cliPath = embeddedTemporal ? await resolveDevServer() : undefined;
  if (embeddedTemporal && cliPath === undefined) throw new StartupError(DEV_SERVER_MISSING);
  await ensurePrismaClient();
  await mkdir(DATA_DIR, { recursive: true });

  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    const options = embeddedPostgres();
    console.log(`Starting PostgreSQL (data in ${options.dataDir}) …`);
    const postgres = stack.add({
      name: 'PostgreSQL',
      ...(await startPostgres(options)),
    });
    databaseUrl = await ensureDatabase(postgres.url, EMBEDDED.databaseName);
  }
  let temporalAddress = config.temporal.address;
  if (cliPath !== undefined) {
    console.log(`Starting the Temporal dev server (${cliPath}; data in .data/temporal.db) …`);
    const temporal = stack.add({
      name: 'Temporal dev server',
      ...(await startTemporalDevServer({
        cliPath,
        dbFile: join(DATA_DIR, 'temporal.db'),
        port: EMBEDDED.temporalPort,
        uiPort: EMBEDDED.temporalUiPort,
        namespace: config.temporal.namespace,
        logFile: join(DATA_DIR, 'temporal.log'),
      })),
    });
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
  };
  stack.add(startTypeScript('worker', 'worker/main.ts', env));
  const api = stack.add(startTypeScript('API', 'api/server.ts', env));
  await waitForApi(api.exited, config.port);
  printBanner(config, embeddedDb ? databaseUrl : undefined, embeddedTemporal);
  return stack.firstExit();
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

function printBanner(config: Config, embeddedDatabaseUrl: string | undefined, embeddedTemporal: boolean): void {
  const lines = [
    '',
    'Order service is running (Ctrl-C stops everything):',
    `  API          http://localhost:${config.port}`,
    `  Health       http://localhost:${config.port}/healthz`,
    `  Orders page  http://localhost:${config.port}/ (sign in with ADMIN_TOKEN)`,
  ];
  if (config.customerTokens.algorithm === 'HS256') lines.push('  Customers    `npm run token -- <customerId>` prints a bearer token for curl');
  if (embeddedTemporal) lines.push(`  Temporal UI  http://localhost:${EMBEDDED.temporalUiPort}`);
  if (embeddedDatabaseUrl !== undefined) lines.push(`  Database     ${embeddedDatabaseUrl}`);
  lines.push('  Providers    the local fakes (THIRD_PARTIES=fake): nothing real is paid or sent');
  lines.push(`  Faults       ${config.faultsEnabled ? 'enabled (PUT /admin/faults/:service)' : 'disabled'}`);
  const devSecrets = devSecretsInUse(config);
  if (devSecrets.length > 0) lines.push('  Dev secrets (public defaults, never for production):', ...devSecrets.map(([name, value]) => `    ${name}=${value}`));
  console.log(lines.join('\n'));
}
