import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosStack } from './stack.js';

/** One injected failure. `prepare` runs before the load starts, `inject` in the middle of it. */
export interface Fault {
  name: string;
  prepare?(stack: ChaosStack): Promise<void>;
  inject(stack: ChaosStack): Promise<void>;
}

const POSTGRES_OUTAGE_MS = 20_000;
/** How long the killed worker stays dead: long enough for deadlines to pass and payments to queue up. */
const WORKER_DOWN_MS = 3_000;

export const FAULTS: readonly Fault[] = [
  {
    name: 'worker SIGKILL',
    async inject(stack) {
      const worker = stack.workers[0]!;
      say(`SIGKILL ${worker.name} (mid-run: activities and workflow tasks in flight)`);
      await stack.killWorker(worker);
      await sleep(WORKER_DOWN_MS);
      const restarted = await stack.startWorker();
      say(`${restarted.name} started after ${WORKER_DOWN_MS / 1000} s down`);
    },
  },
  {
    name: 'Temporal restart',
    async inject(stack) {
      say('stopping the Temporal dev server');
      const started = Date.now();
      await stack.stopTemporal();
      await stack.startTemporal();
      say(`Temporal dev server back on its persisted SQLite file after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
  },
  {
    name: 'PostgreSQL down 20 s',
    async inject(stack) {
      say('stopping PostgreSQL');
      await stack.stopPostgres();
      await sleep(POSTGRES_OUTAGE_MS);
      await stack.startPostgres();
      say(`PostgreSQL back after ${POSTGRES_OUTAGE_MS / 1000} s down`);
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

export function say(line: string): void {
  console.log(`   [${new Date().toISOString().slice(11, 23)}] >> ${line}`);
}
