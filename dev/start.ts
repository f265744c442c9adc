import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../lib/config/index.js';
import { devSecretsInUse } from '../lib/config/secrets.js';
import { requireThirdParties } from '../lib/config/third-parties.js';
import { DATA_DIR } from './paths.js';
import { providersInUse } from './start-banner.js';
import { EMBEDDED, EMBEDDED_TEMPORAL_PORTS, EMBEDDED_TEMPORAL_STORE, SECOND_WORKER_METRICS } from './embedded.js';
import { startLocalStack, StopRequested, type Crash, type LocalStack, type LocalStackOptions } from './local-stack.js';
import { runMain, StartupError } from './startup-error.js';
import { TEMPORAL_SERVICES } from './temporal/server.js';

// `npm start [-- --cluster]`: the whole service on one machine. What the environment does not
// provide (DATABASE_URL, TEMPORAL_ADDRESS) it starts embedded, with state kept in .data/ across
// restarts; then it migrates the database and runs the worker and the API until Ctrl-C.
// `--cluster`: Temporal as one process per service on the embedded PostgreSQL, and two workers.

runMain(async () => {
  const { values } = parseArgs({ options: { cluster: { type: 'boolean', default: false } } });
  const config = loadConfig();
  let crashed!: (crash: Crash) => void;
  const crash = new Promise<Crash>((resolve) => (crashed = resolve));
  // Ctrl-C stops the stack, during its start too (startLocalStack then fails with StopRequested).
  const stopping = new AbortController();
  const stopSignal = onStopSignal().then((signal) => {
    console.log(`\n${signal}: stopping.`);
    stopping.abort();
    return { signal };
  });
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      ...stackOptions(config, values.cluster),
      onCrash: crashed,
      signal: stopping.signal,
    });
  } catch (err) {
    if (!(err instanceof StopRequested)) throw err;
    console.log('Stopped.');
    process.exit(0);
  }
  printBanner(config, stack, values.cluster);
  const outcome = await Promise.race([crash, stopSignal]);
  if ('signal' in outcome) {
    await stack.stop();
    console.log('Stopped.');
    process.exit(0);
  }
  console.error(`error: ${outcome.name} stopped unexpectedly (${outcome.how}); stopping everything.`);
  await stack.stop();
  process.exit(1);
});

/** `npm start`'s stack from the configuration, refusing the combinations that cannot work. */
function stackOptions(config: Config, cluster: boolean): LocalStackOptions {
  const embeddedDb = config.databaseUrl === undefined;
  const embeddedTemporal = config.temporal.address === undefined;
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
  const firstWorker = { metricsPort: config.workerMetricsPort, sdkMetricsAddress: config.sdkMetricsAddress };
  return {
    dataDir: DATA_DIR,
    postgres:
      config.databaseUrl === undefined
        ? { kind: 'embedded', port: EMBEDDED.postgresPort, database: EMBEDDED.databaseName }
        : { kind: 'external', url: config.databaseUrl },
    temporal:
      config.temporal.address === undefined
        ? {
            kind: 'server',
            store: temporalOnPostgres ? 'postgres' : 'sqlite',
            cluster,
            ports: EMBEDDED_TEMPORAL_PORTS,
            uiPort: EMBEDDED.temporalUiPort,
          }
        : { kind: 'external', address: config.temporal.address },
    namespace: config.temporal.namespace,
    apiPort: config.port,
    // No SMTP_URL: the emails go to a Mailpit of the stack's own, read in its web UI.
    ...(config.mail === undefined ? { mailpit: EMBEDDED.mailpit } : {}),
    workers: cluster ? [firstWorker, SECOND_WORKER_METRICS] : [firstWorker],
    // Decided here, where "embedded" is known: the children see both addresses set.
    serviceEnv: {
      THIRD_PARTIES: thirdParties,
      FAULTS_ENABLED: String(config.faultsEnabled),
      // One build runs here: the workers make it the Worker Deployment's current version.
      TEMPORAL_SET_CURRENT_VERSION: 'true',
    },
    serviceOutput: 'terminal',
    log: (line) => console.log(line),
  };
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

function printBanner(config: Config, stack: LocalStack, cluster: boolean): void {
  const lines = [
    '',
    'Order service is running (Ctrl-C stops everything):',
    `  API          http://localhost:${config.port}`,
    `  Health       http://localhost:${config.port}/healthz`,
    `  Orders page  http://localhost:${config.port}/ (sign in with ADMIN_TOKEN)`,
  ];
  if (config.customerTokens.algorithm === 'HS256')
    lines.push('  Customers    `npm run token -- <customerId>` prints a bearer token for curl');
  // Payloads are encrypted: the Web UI decrypts them through the API for the browser signed in there.
  if (stack.temporalUiUrl !== undefined)
    lines.push(`  Temporal UI  ${stack.temporalUiUrl} (sign in on the orders page first to read payloads)`);
  if (cluster) {
    const services = TEMPORAL_SERVICES.map((s) => `${s} :${EMBEDDED_TEMPORAL_PORTS[s].grpc}`).join(', ');
    lines.push(
      `  Temporal     cluster: ${services} (logs .data/temporal-<service>.log)`,
      '  Workers      2 replicas on the same task queue',
    );
  }
  if (config.databaseUrl === undefined) lines.push(`  Database     ${stack.databaseUrl}`);
  lines.push(
    config.mail === undefined
      ? `  Emails       ${stack.mailpitUrl} (Mailpit: every email sent to customers)`
      : `  Emails       through ${config.mail.smtpServer}`,
  );
  lines.push(`  Providers    ${providersInUse(config)}`);
  lines.push(`  Faults       ${config.faultsEnabled ? 'enabled (PUT /admin/faults/:service)' : 'disabled'}`);
  const devSecrets = devSecretsInUse(config);
  if (devSecrets.length > 0)
    lines.push(
      '  Dev secrets (public defaults, never for production):',
      ...devSecrets.map(([name, value]) => `    ${name}=${value}`),
    );
  console.log(lines.join('\n'));
}
