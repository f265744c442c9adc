import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityOptions,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import ms from 'ms';
import type { Activities } from '../activities/index.js';
import { databaseOptions, moneyOptions, notificationOptions, STEP_STUCK_AFTER } from './activity-options.js';

/**
 * The activities that follow a decision: the guarded cancel and what it owes, settling a payment
 * and the refund it may owe, the customer's notices, an adoption's load. Same presets either way;
 * only where they run differs.
 *
 * As regular activities each is a task of its own on the task queue, and its result comes back in
 * a further workflow task. As local activities (the `local-steps` shape) they run inside the
 * workflow task that decided, so an expired order is cancelled, compensated and finished in one
 * task instead of four (figures in docs/benchmark.md).
 */
export interface Steps {
  database: ActivityInterfaceFor<Activities>;
  money: ActivityInterfaceFor<Activities>;
  messaging: ActivityInterfaceFor<Activities>;
}

/** The steps of a run: local ones since the `local-steps` shape, regular ones in runs from before. */
export function stepsFor({ local }: { local: boolean }): Steps {
  return local ? LOCAL : REGULAR;
}

const REGULAR: Steps = {
  database: proxyActivities<Activities>(databaseOptions),
  money: proxyActivities<Activities>(moneyOptions),
  messaging: proxyActivities<Activities>(notificationOptions),
};

/**
 * Retries up to this long apart run inside the workflow task (a blip of the database or a
 * provider); longer ones wait on a durable timer in the history, so an outage survives a worker
 * restart and the time-skipping tests can skip it.
 */
const LOCAL_RETRY_THRESHOLD = '1 second';

/**
 * A preset as a local activity, failing the way its regular activity would, so that the workflow
 * reads both alike (workflows/failures.ts). One difference needs care: a local activity's
 * schedule-to-close runs on the worker's wall clock, not on workflow time. So a step that must
 * succeed is not bounded by STEP_STUCK_AFTER but by a round of as many attempts as its backoff
 * fits into STEP_STUCK_AFTER; a round whose last attempt failed reads as the regular activity's
 * timeout (stuck: flagged and called again), on workflow time in production and in tests alike.
 * A round whose last attempt timed out may come back already wrapped by the SDK's core, with a
 * retry state of its own: it is passed on as it is, and MustSucceed treats it as ours all the same
 * (flagged and called again). Re-wrapping it now would change which runs record the
 * settle-every-payment patch marker, and with it the replay of runs in flight.
 */
function local(options: ActivityOptions): ActivityInterfaceFor<Activities> {
  const retry = options.retry ?? {};
  const mustSucceed = options.scheduleToCloseTimeout !== undefined;
  const proxy = proxyLocalActivities<Activities>({
    startToCloseTimeout: options.startToCloseTimeout,
    localRetryThreshold: LOCAL_RETRY_THRESHOLD,
    retry: mustSucceed ? { ...retry, maximumAttempts: attemptsWithin(retry, STEP_STUCK_AFTER) } : retry,
  } satisfies LocalActivityOptions);
  const refused = (err: ApplicationFailure) =>
    err.nonRetryable || (retry.nonRetryableErrorTypes ?? []).includes(err.type ?? '');
  return new Proxy(proxy, {
    get(target, activityType: keyof Activities & string) {
      return (...args: unknown[]) =>
        (target[activityType] as (...a: unknown[]) => Promise<unknown>)(...args).catch((err: unknown) => {
          if (!(err instanceof ApplicationFailure || err instanceof TimeoutFailure)) throw err; // e.g. a cancellation
          const retryState =
            err instanceof ApplicationFailure && refused(err)
              ? 'NON_RETRYABLE_FAILURE'
              : mustSucceed
                ? 'TIMEOUT'
                : 'MAXIMUM_ATTEMPTS_REACHED';
          throw new ActivityFailure('Local activity failed', activityType, undefined, retryState, undefined, err);
        });
    },
  });
}

/** How many attempts of `retry` fit into `budget`, counting the backoff between them. */
export function attemptsWithin(retry: RetryPolicy, budget: Duration): number {
  const budgetMs = durationMs(budget);
  const maxMs = retry.maximumInterval === undefined ? Infinity : durationMs(retry.maximumInterval);
  let intervalMs = durationMs(retry.initialInterval ?? '1s');
  if (!(intervalMs > 0)) throw new RangeError('attemptsWithin needs an initial interval above 0');
  let waitedMs = 0;
  let attempts = 1;
  while (waitedMs + intervalMs <= budgetMs) {
    waitedMs += intervalMs;
    attempts++;
    intervalMs = Math.min(intervalMs * (retry.backoffCoefficient ?? 2), maxMs);
  }
  return attempts;
}

/** Temporal's Duration (a number of milliseconds, or a string as the `ms` package reads it) in milliseconds. */
const durationMs = (d: Duration): number => (typeof d === 'number' ? d : ms(d));

const LOCAL: Steps = {
  database: local(databaseOptions),
  money: local(moneyOptions),
  messaging: local(notificationOptions),
};
