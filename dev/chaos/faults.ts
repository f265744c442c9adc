import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { ChaosClient } from './client.js';
import type { TemporalService } from '../temporal/server.js';
import type { LocalStack } from '../local-stack.js';

/** One injected failure. `prepare` runs before the load starts, `inject` in the middle of it. */
export interface Fault {
  name: string;
  prepare?(stack: LocalStack): Promise<void>;
  inject(stack: LocalStack, client: ChaosClient): Promise<void>;
}
const HEALTH_RECOVERY_BOUND_MS = 60_000;

const POSTGRES_OUTAGE_MS = 20_000;
/** How long the killed worker stays dead: long enough for deadlines to pass and payments to queue up. */
const WORKER_DOWN_MS = 3_000;

export const WORKER_SIGKILL: Fault = {
  name: 'worker SIGKILL',
  async inject(stack) {
    const worker = stack.workers[0]!;
    say(`SIGKILL ${worker.name} (mid-run: activities and workflow tasks in flight)`);
    await stack.killWorker(worker);
    await sleep(WORKER_DOWN_MS);
    const restarted = await stack.startWorker();
    say(`${restarted.name} started after ${WORKER_DOWN_MS / 1000} s down`);
  },
};

export const FAULTS: readonly Fault[] = [
  WORKER_SIGKILL,
  {
    name: 'Temporal restart',
    async inject(stack, client) {
      say('stopping Temporal Server');
      const started = Date.now();
      await stack.stopTemporal();
      await sayHealth(client);
      await stack.startTemporal();
      say(`Temporal Server back on its persisted SQLite file after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      await awaitHealthy(client);
    },
  },
  {
    name: 'PostgreSQL down 20 s',
    async inject(stack, client) {
      say('stopping PostgreSQL');
      await stack.stopPostgres();
      await sayHealth(client);
      await sleep(POSTGRES_OUTAGE_MS);
      await stack.startPostgres();
      say(`PostgreSQL back after ${POSTGRES_OUTAGE_MS / 1000} s down`);
      await awaitHealthy(client);
    },
  },
  {
    name: 'worker and API SIGKILL',
    async inject(stack, client) {
      const worker = stack.workers[0]!;
      say(`SIGKILL ${worker.name} and the API (mid-stream: sends, activities and requests in flight)`);
      await Promise.all([stack.killWorker(worker), stack.killApi()]);
      await sayHealth(client);
      await sleep(WORKER_DOWN_MS);
      const restarted = await stack.startWorker();
      await stack.startApi();
      say(`${restarted.name} and the API started after ${WORKER_DOWN_MS / 1000} s down`);
      await awaitHealthy(client);
    },
  },
  {
    name: 'two workers, one SIGKILLed',
    async prepare(stack) {
      const second = await stack.startWorker();
      say(`${second.name} started: ${stack.workers.length} workers share the task queue`);
    },
    async inject(stack) {
      const victim = stack.workers[0]!;
      say(`SIGKILL ${victim.name}; ${stack.workers.length - 1} worker(s) carry on`);
      await stack.killWorker(victim);
    },
  },
];

/**
 * `--outage <duration>`: PostgreSQL down far longer than one round of any retry preset. Every minute
 * it says what operators would see: /healthz, the orders flagged NeedsAttention, and the stuck-call
 * counter on the workers' /metrics.
 */
export function postgresOutage(ms: number, label: string): Fault {
  return {
    name: `PostgreSQL down ${label}`,
    async inject(stack, client) {
      say('stopping PostgreSQL');
      const started = Date.now();
      await stack.stopPostgres();
      await sayHealth(client);
      const connection = await Connection.connect({ address: stack.temporalAddress });
      try {
        const temporal = new Client({ connection });
        while (Date.now() - started < ms) {
          await sleep(Math.min(60_000, ms - (Date.now() - started)));
          const flagged = await temporal.workflow.count('NeedsAttention = true AND ExecutionStatus = "Running"').then(
            (c) => String(c.count),
            (err: Error) => err.message,
          );
          say(
            `down ${Math.round((Date.now() - started) / 1000)} s: running orders flagged NeedsAttention ${flagged}; ${await stuckCounters(stack)}`,
          );
        }
      } finally {
        await connection.close();
      }
      await stack.startPostgres();
      say(`PostgreSQL back after ${((Date.now() - started) / 60_000).toFixed(1)} min down`);
      await awaitHealthy(client);
    },
  };
}

/** order_calls_stuck_total summed over the workers, by activity. */
async function stuckCounters(stack: LocalStack): Promise<string> {
  const byActivity = new Map<string, number>();
  for (const url of stack.workerMetricsUrls.values()) {
    const text = await fetch(url, { headers: stack.workerMetricsHeaders() }).then(
      (r) => r.text(),
      () => '',
    );
    for (const [, activity, value] of text.matchAll(
      /^order_calls_stuck_total\{[^}]*activity="([^"]+)"[^}]*\} (\d+)/gm,
    )) {
      byActivity.set(activity!, (byActivity.get(activity!) ?? 0) + Number(value));
    }
  }
  const counted = [...byActivity].map(([activity, n]) => `${activity}=${n}`).join(' ');
  return `order_calls_stuck_total ${byActivity.size === 0 ? 'none yet' : counted}`;
}

/** How long the SIGKILLed history service stays dead: timers come due and tasks queue up meanwhile. */
const HISTORY_DOWN_MS = 3_000;

/** The faults only a cluster has (`npm run chaos -- --cluster`): one Temporal service at a time. */
export const CLUSTER_FAULTS: readonly Fault[] = [
  {
    name: 'history service SIGKILL',
    async inject(stack) {
      say('SIGKILL the history service (every shard it owns, mid-write)');
      await stack.stopTemporalService('history', 'kill');
      await sleep(HISTORY_DOWN_MS);
      stack.startTemporalService('history');
      say(
        `history service started again after ${HISTORY_DOWN_MS / 1000} s down; it takes its shards back from the store`,
      );
    },
  },
  {
    name: 'matching service restart',
    inject: (stack, client) => restartService(stack, client, 'matching'),
  },
  {
    name: 'frontend restart',
    inject: (stack, client) => restartService(stack, client, 'frontend'),
  },
];

/** A clean stop (SIGTERM) and a start, as a rolling deploy does it. */
async function restartService(stack: LocalStack, client: ChaosClient, service: TemporalService): Promise<void> {
  say(`restarting the ${service} service`);
  const started = Date.now();
  await stack.stopTemporalService(service, 'stop');
  if (service === 'frontend') await sayHealth(client);
  stack.startTemporalService(service);
  say(`${service} service started again ${((Date.now() - started) / 1000).toFixed(1)} s after its stop began`);
  await awaitHealthy(client);
}

async function sayHealth(client: ChaosClient): Promise<void> {
  const { status, body, ms } = await client.request('GET', '/healthz');
  say(`GET /healthz → ${status} ${JSON.stringify(body)} in ${ms.toFixed(0)} ms`);
}

/** The service must recover on its own: /healthz is polled (bounded) until it says 200 again. */
async function awaitHealthy(client: ChaosClient): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < HEALTH_RECOVERY_BOUND_MS) {
    if ((await client.request('GET', '/healthz')).status === 200)
      return say(`GET /healthz → 200 again after ${Date.now() - started} ms`);
    await sleep(250);
  }
  say(`GET /healthz still not 200 after ${HEALTH_RECOVERY_BOUND_MS / 1000} s`);
}

export function say(line: string): void {
  console.log(`   [${new Date().toISOString().slice(11, 23)}] >> ${line}`);
}
