import { Logger, makeWorkerUtils, run, type WorkerUtils } from 'graphile-worker';
import type { DirectActivities } from '../direct-placement.js';
import { expireOrder } from '../expiry.js';

/**
 * The PostgreSQL job queue Node teams use, on the bench's own PostgreSQL (schema graphile_worker):
 * one job per order, due at its deadline (`run_at`), keyed by the order (`job_key`) so a payment
 * removes it; the task runs the service's guarded cancel and compensation (expireOrder).
 * graphile-worker's defaults otherwise: its poll interval (2 s) for jobs that become due, and the
 * lock a dead worker leaves on its jobs, which another takes over only after 4 hours.
 */
export const EXPIRE_TASK = 'expire_order';
export const GRAPHILE_PEER = {
  /** Jobs run at once (as the scan job's compensation and the Redis worker). */
  concurrency: 8,
} as const;

/** Only warnings and errors: the default logger writes a line per job. */
const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
});

/** The bench's side: the schema installed, jobs added at placement and removed on payment. */
export class GraphileDeadlines {
  private constructor(private readonly utils: WorkerUtils) {}

  static async connect(connectionString: string): Promise<GraphileDeadlines> {
    const utils = await makeWorkerUtils({ connectionString, logger: quietLogger });
    await utils.migrate();
    return new GraphileDeadlines(utils);
  }

  async schedule(orderId: string, expiresAtMs: number): Promise<void> {
    await this.utils.addJob(EXPIRE_TASK, { orderId }, { runAt: new Date(expiresAtMs), jobKey: orderId });
  }

  /** Payment: graphile-worker's remove_job (a job already running is left to finish; the guarded cancel then loses). */
  async forget(orderId: string): Promise<void> {
    await this.utils.withPgClient((client) => client.query('SELECT graphile_worker.remove_job($1)', [orderId]));
  }

  async close(): Promise<void> {
    await this.utils.release();
  }
}

export interface GraphilePeerStats {
  cancelled: number;
  compensatedAgain: number;
  settled: number;
  notDue: number;
}

/** The peer's process: a graphile-worker runner with the one task. */
export async function startGraphilePeer(direct: DirectActivities, connectionString: string) {
  const stats: GraphilePeerStats = { cancelled: 0, compensatedAgain: 0, settled: 0, notDue: 0 };
  const runner = await run({
    connectionString,
    concurrency: GRAPHILE_PEER.concurrency,
    noHandleSignals: true,
    logger: quietLogger,
    taskList: {
      async [EXPIRE_TASK](payload) {
        const { orderId } = payload as { orderId: string };
        const done = await expireOrder(direct, orderId);
        if (done.outcome === 'not-due') {
          stats.notDue++;
          // Failing the job makes graphile-worker run it again later (its backoff).
          throw new Error(`order ${orderId} is not due until ${new Date(done.expiresAtMs).toISOString()}`);
        }
        stats[
          done.outcome === 'cancelled' ? 'cancelled' : done.outcome === 'settled' ? 'settled' : 'compensatedAgain'
        ]++;
      },
    },
  });
  return {
    async stop(): Promise<GraphilePeerStats> {
      await runner.stop();
      return stats;
    },
  };
}
