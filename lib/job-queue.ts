import { Logger as JobQueueLogger, run, runMigrations, type Runner, type Task, type TaskList } from 'graphile-worker';
import type { Logger } from './logger.js';

/**
 * graphile-worker, the PostgreSQL job queue that carries the order events' deliveries: jobs live in
 * the schema `graphile_worker` of the service's own database, so a job can be added in the
 * transaction of the row it is about (a trigger, or a statement that also moves a status).
 */

/**
 * Installs or upgrades the queue's schema. Wherever the migrations run, this runs with them: the
 * trigger on order_events calls `graphile_worker.add_job`, so a database without the schema would
 * fail the status change that writes an event.
 */
export async function installJobQueue(connectionString: string): Promise<void> {
  await runMigrations({ connectionString, logger: quietLogger });
}

export interface JobRunnerOptions {
  connectionString: string;
  /**
   * A job locked longer than this was taken by a worker that died (no job of ours runs that long):
   * its worker's locks are released so that another runs it. graphile-worker itself waits 4 hours.
   */
  staleLockMs: number;
  /** Jobs run at once in this process. */
  concurrency: number;
  /** How often jobs that became due (a retry's backoff over) are looked for; new jobs are announced at once (LISTEN/NOTIFY). */
  pollIntervalMs: number;
  taskList: TaskList;
  logger: Logger;
}

/**
 * A runner in this process, stopped by the caller (stop() lets running jobs finish); it installs
 * the schema first if missing. Signals are the caller's: the worker's shutdown decides when.
 */
export async function startJobRunner(options: JobRunnerOptions): Promise<Runner> {
  const runner = await run({
    connectionString: options.connectionString,
    concurrency: options.concurrency,
    pollInterval: options.pollIntervalMs,
    noHandleSignals: true,
    taskList: { ...options.taskList, [RELEASE_STALE_LOCKS]: releaseStaleLocks(options.staleLockMs) },
    // Every minute, and once now: a worker restarted after a crash frees what its predecessor held.
    crontab: `* * * * * ${RELEASE_STALE_LOCKS}`,
    logger: pinoLogger(options.logger),
  });
  await runner.addJob(RELEASE_STALE_LOCKS, {});
  return runner;
}

const RELEASE_STALE_LOCKS = 'job_queue_release_stale_locks';

/** graphile-worker's own force_unlock_workers, for every worker that holds a job locked too long. */
function releaseStaleLocks(staleLockMs: number): Task {
  return async (_payload, helpers) => {
    const { rows } = await helpers.withPgClient((client) =>
      client.query<{ workers: string[] | null }>(
        `SELECT array_agg(DISTINCT locked_by) AS workers FROM graphile_worker.jobs
          WHERE locked_at < now() - $1::int * interval '1 millisecond'`,
        [staleLockMs],
      ),
    );
    const workers = rows[0]?.workers;
    if (!workers) return;
    await helpers.withPgClient((client) => client.query('SELECT graphile_worker.force_unlock_workers($1)', [workers]));
    helpers.logger.warn(`released the jobs of workers that held one locked too long: ${workers.join(', ')}`);
  };
}

/** graphile-worker's lines into the process's log; a line per job is debug, not info. */
function pinoLogger(logger: Logger): JobQueueLogger {
  return new JobQueueLogger((scope) => (level, message, meta) => {
    const fields = { jobQueue: { taskIdentifier: scope.taskIdentifier, jobId: scope.jobId }, ...meta };
    if (level === 'error') logger.error(fields, message);
    else if (level === 'warning') logger.warn(fields, message);
    else logger.debug(fields, message);
  });
}

const quietLogger = new JobQueueLogger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`job queue ${level}: ${message}`);
});
