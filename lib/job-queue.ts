import { EventEmitter } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import {
  Logger as JobQueueLogger,
  run,
  runMigrations,
  type Runner,
  type Task,
  type TaskList,
  type WorkerEvents,
} from 'graphile-worker';
import pg from 'pg';
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

/** A runner of this process's; see startJobRunner. */
export interface JobRunner {
  /** Lets the running jobs finish, then stops. */
  stop(): Promise<void>;
}

/**
 * A runner in this process, stopped by the caller; it installs the schema first if missing.
 * Signals are the caller's: the worker's shutdown decides when.
 *
 * graphile-worker records a job's end (its completeJob and failJob) without awaiting it, and
 * retries that statement only on the codes it deems transient: PostgreSQL lost at that moment (a
 * refused or cut connection, 57P01) rejects where nothing catches it, which would end the process.
 * So the runner's connections come from a pool of its own whose errors are known: an unhandled
 * rejection one of them raised is taken here, and the runner is restarted once PostgreSQL answers,
 * what the old one held released at once (the job whose end was lost runs again: at least once).
 * Any other unhandled rejection is thrown again and ends the process, as Node does without a
 * listener. A runner that stops on its own is restarted the same way.
 */
export async function startJobRunner(options: JobRunnerOptions): Promise<JobRunner> {
  let stopping = false;
  let restarting: Promise<void> | undefined;
  let current: Started | undefined;
  const pool = queuePool(options, (err) =>
    restart(`a statement of its own that nothing awaited failed, a job's end not recorded (${err.message})`),
  );
  const retryWait = () => setTimeout(options.pollIntervalMs);

  const start = async (): Promise<Started> => {
    const events: WorkerEvents = new EventEmitter();
    let id = '';
    events.on('pool:create', ({ workerPool }) => (id = workerPool.id));
    const runner = await run({
      pgPool: pool,
      events,
      concurrency: options.concurrency,
      pollInterval: options.pollIntervalMs,
      noHandleSignals: true,
      taskList: { ...options.taskList, [RELEASE_STALE_LOCKS]: releaseStaleLocks(options.staleLockMs) },
      // Every minute, and once now: a worker restarted after a crash frees what its predecessor held.
      crontab: `* * * * * ${RELEASE_STALE_LOCKS}`,
      logger: pinoLogger(options.logger),
    });
    const started = { runner, id, running: true };
    const ended = () => {
      started.running = false;
      // Not when the caller or a restart stops it.
      if (current === started && !stopping && !restarting) restart('its runner stopped on its own');
    };
    void runner.promise.then(ended, ended);
    await runner.addJob(RELEASE_STALE_LOCKS, {});
    return started;
  };

  function restart(why: string): void {
    options.logger.error(`job queue: ${why}; its runner restarts once PostgreSQL answers`);
    const old = current;
    if (stopping || restarting || !old) return;
    restarting = (async () => {
      while (!stopping && !(await answers(pool))) await retryWait();
      if (old.running)
        await old.runner
          .stop()
          .catch((err: unknown) => options.logger.warn({ err }, 'job queue: its old runner stopped on an error'));
      while (!stopping) {
        try {
          // No job runs under the old runner's id any more: what it still holds is freed now, not
          // after JOB_QUEUE_STALE_LOCK.
          await pool.query('SELECT graphile_worker.force_unlock_workers($1)', [[old.id]]);
          current = await start();
          options.logger.warn('job queue: its runner restarted');
          return;
        } catch (err) {
          options.logger.warn({ err }, 'job queue: its runner could not restart yet');
          await retryWait();
        }
      }
    })().finally(() => (restarting = undefined));
  }

  try {
    current = await start();
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    async stop() {
      stopping = true;
      await restarting;
      if (current?.running) await current.runner.stop();
      await pool.end();
    },
  };
}

interface Started {
  runner: Runner;
  /** Its worker pool's id: what its jobs are locked by. */
  id: string;
  running: boolean;
}

const answers = (pool: pg.Pool) =>
  pool.query('SELECT 1').then(
    () => true,
    () => false,
  );

/**
 * The runner's own connections (graphile-worker's default size, 10). Each error a connection or a
 * statement of it raises is remembered with `lost`, for the process's unhandled-rejection listener,
 * which is installed while such a pool is open.
 */
function queuePool(options: JobRunnerOptions, lost: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 10 });
  const remember = (err: unknown) => {
    if (typeof err === 'object' && err !== null) raisedByQueuePools.set(err, lost);
    throw err;
  };
  // A connection that breaks, idle or checked out, emits its error: logged here, raised again by
  // its next statement, which graphile-worker handles (or leaves to the listener).
  pool.on('error', (err) => options.logger.warn({ err }, 'job queue: an idle PostgreSQL connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (err) => options.logger.warn({ err }, 'job queue: a PostgreSQL connection failed'));
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const result = query(...args);
      return result instanceof Promise ? result.catch(remember) : result;
    }) as typeof client.query;
  });
  const connect = pool.connect.bind(pool);
  pool.connect = ((callback?: Parameters<typeof pool.connect>[0]) =>
    callback ? connect(callback) : connect().catch(remember)) as typeof pool.connect;
  if (openQueuePools++ === 0) process.on('unhandledRejection', onUnhandledRejection);
  const end = pool.end.bind(pool);
  pool.end = async () => {
    await end();
    if (--openQueuePools === 0) process.off('unhandledRejection', onUnhandledRejection);
  };
  return pool;
}

const raisedByQueuePools = new WeakMap<object, (err: Error) => void>();
let openQueuePools = 0;

function onUnhandledRejection(reason: unknown): void {
  const lost = typeof reason === 'object' && reason !== null ? raisedByQueuePools.get(reason) : undefined;
  if (!lost) throw reason;
  lost(reason as Error);
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
