import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { createDb } from '../../lib/db.js';
import { parseDuration } from '../../lib/duration.js';
import { runMain } from '../startup-error.js';
import { stockCatalog } from './catalog.js';
import { ChaosClient } from './client.js';
import { CLUSTER_FAULTS, FAULTS, postgresOutage, say } from './faults.js';
import { runFundsPhase } from './funds.js';
import { LoadGenerator, seededRandom } from './load.js';
import type { LocalStack } from '../local-stack.js';
import { CHAOS_SECRETS, CHAOS_TASK_QUEUE, logTails, startChaosStack } from './stack.js';
import { runStorm } from './storm.js';
import { describeVerdict, settleAndJudge } from './verdict.js';
import { describeWebhooks, settleWebhooks, WebhookReceiver } from './webhooks.js';

/**
 * `npm run chaos [-- --short | --storm | --outage 15m] [--cluster] [--seed N]`: the service under a
 * steady stream of orders and payments while a worker is SIGKILLed, Temporal restarts, PostgreSQL is
 * down for 20 s, the worker and the API are SIGKILLed together and one of two workers dies; after each
 * fault it waits for everything to settle, runs the invariant checker and prints "<fault>: N lost, N
 * duplicated", then waits for the order events' webhooks to reach its own endpoint (webhooks.ts) and
 * judges them: none missing, no gap in an order's seqs, every signature valid. Then, on a stack whose provider
 * holds payments, orders awaiting funds or in an abandoned 3-D Secure meet a worker SIGKILL
 * (funds.ts). The default run adds the load-held
 * storm; `--storm` runs only the storm; `--outage D` only PostgreSQL down for D under load. `--cluster`
 * runs Temporal as one process per service with two workers, and injects the faults only a cluster has
 * instead: the history service SIGKILLed, the matching service and the frontend restarted. Everything
 * runs on loopback on free ports and is stopped on exit, also on Ctrl-C.
 */
const PAYMENT_WINDOW = '3s';
const PROFILES = {
  short: {
    ordersPerSecond: 4,
    loadBeforeMs: 6_000,
    loadAfterMs: 8_000,
    settleBoundMs: 120_000,
    webhooksBoundMs: 180_000,
    faults: true,
    storm: false,
  },
  default: {
    ordersPerSecond: 5,
    loadBeforeMs: 20_000,
    loadAfterMs: 30_000,
    settleBoundMs: 180_000,
    webhooksBoundMs: 180_000,
    faults: true,
    storm: true,
  },
  storm: {
    ordersPerSecond: 0,
    loadBeforeMs: 0,
    loadAfterMs: 0,
    settleBoundMs: 0,
    webhooksBoundMs: 0,
    faults: false,
    storm: true,
  },
  // Activities back off up to a minute apart while PostgreSQL is down: allow a few rounds to settle.
  outage: {
    ordersPerSecond: 4,
    loadBeforeMs: 20_000,
    loadAfterMs: 30_000,
    settleBoundMs: 300_000,
    webhooksBoundMs: 300_000,
    faults: true,
    storm: false,
  },
} as const;

runMain(async () => {
  const { values } = parseArgs({
    options: {
      short: { type: 'boolean' },
      storm: { type: 'boolean' },
      outage: { type: 'string' },
      cluster: { type: 'boolean', default: false },
      seed: { type: 'string' },
    },
  });
  const profileName =
    values.outage !== undefined ? 'outage' : values.storm ? 'storm' : values.short ? 'short' : 'default';
  const profile = PROFILES[profileName];
  const cluster = values.cluster;
  const faults =
    values.outage !== undefined
      ? [postgresOutage(parseDuration(values.outage), values.outage)]
      : cluster
        ? CLUSTER_FAULTS
        : FAULTS;
  const seed = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : Number(values.seed);
  const started = Date.now();
  console.log(
    `Chaos run (${profileName}${cluster ? ', Temporal cluster' : ''}, seed ${seed}, PAYMENT_WINDOW ${PAYMENT_WINDOW}) — loopback only, free ports, a temp directory`,
  );

  let stack: LocalStack | undefined;
  let interrupted = false;
  const onSignal = (signal: string) => {
    if (interrupted) return;
    interrupted = true;
    console.log(`\n${signal}: stopping everything the chaos run started …`);
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let failed = false;
  const receiver = await WebhookReceiver.start();
  try {
    stack = await startChaosStack({ paymentWindow: PAYMENT_WINDOW, cluster });
    console.log(
      `Stack up in ${((Date.now() - started) / 1000).toFixed(1)} s: API ${stack.apiUrl}, Temporal ${stack.temporalAddress}, files in ${stack.dataDir}`,
    );
    const client = new ChaosClient(stack.apiUrl, CHAOS_SECRETS);
    const db = createDb(stack.databaseUrl, { maxConnections: 3 });
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const temporal = new Client({ connection });
    try {
      await receiver.register(client);
      say(`webhook endpoint ${receiver.url} registered for every order event type`);
      const catalog = await stockCatalog(client, 400);
      const random = seededRandom(seed);
      const summary: string[] = [];
      if (profile.faults) {
        for (const fault of faults) {
          if (interrupted) break;
          console.log(`\n== ${fault.name}`);
          await fault.prepare?.(stack);
          const load = new LoadGenerator(client, catalog, {
            ordersPerSecond: profile.ordersPerSecond,
            paymentWindowMs: parseDuration(PAYMENT_WINDOW),
            random,
          });
          load.start();
          say(
            `load: ${profile.ordersPerSecond} orders/s with payments on time, late, wrong, redelivered, doubled and missing`,
          );
          await sleep(profile.loadBeforeMs);
          await fault.inject(stack, client);
          await sleep(profile.loadAfterMs);
          say('load stopped; waiting for every order, payment and refund to settle');
          const ledger = await load.stop();
          const verdict = await settleAndJudge(db, temporal, CHAOS_TASK_QUEUE, ledger, profile.settleBoundMs);
          const lines = describeVerdict(fault.name, ledger, verdict);
          console.log(lines.join('\n'));
          summary.push(lines.at(-1)!);
          say('waiting for every webhook delivery of the run to be DELIVERED');
          const webhooks = await settleWebhooks(db, receiver, ledger, profile.webhooksBoundMs);
          const webhooksLine = describeWebhooks(fault.name, webhooks);
          console.log(webhooksLine);
          summary.push(webhooksLine);
          failed ||= !verdict.ok || !webhooks.ok;
        }
      }
      // Orders awaiting funds need a provider that holds payments: a stack of their own.
      if (profile.faults && !cluster && values.outage === undefined && !interrupted) {
        const funds = await runFundsPhase({ paymentWindow: PAYMENT_WINDOW, profile, random });
        summary.push(funds.summary);
        failed ||= !funds.ok;
      }
      if (profile.storm && !interrupted) {
        const storm = await runStorm({ stack, client, db, temporal });
        summary.push(...storm.summary);
        failed ||= !storm.ok;
      }
      if (stack.crashes.length > 0) {
        failed = true;
        summary.push(`processes that ended on their own: ${stack.crashes.map((c) => `${c.name} ${c.how}`).join('; ')}`);
      }
      console.log(`\n== Summary (${((Date.now() - started) / 1000).toFixed(0)} s)\n${summary.join('\n')}`);
      console.log(failed ? 'CHAOS: FAILED' : 'CHAOS: PASSED');
    } finally {
      await connection.close();
      await db.$disconnect();
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    if (!interrupted) {
      if (failed && stack)
        console.log(await logTails(stack.logDir).catch((err: Error) => `(logs unreadable: ${err.message})`));
      console.log(
        failed && stack
          ? `Stopping everything (files kept for inspection in ${stack.dataDir}) …`
          : 'Stopping everything …',
      );
      await stack?.stop({ keepFiles: failed });
    }
    await receiver.close();
    process.exitCode = failed ? 1 : 0;
  }
});
