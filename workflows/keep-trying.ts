import { CancellationScope, log, metricMeter, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import ms from 'ms';
import type { Activities } from '../activities/index.js';
import { STUCK_AFTER } from './activity-options.js';
import type { Attention } from './attention.js';
import { OUTAGE_BACKOFF } from './backoff.js';
import { errorTypesOf, failureKind, rootCauseMessage, type FailureKind } from './failures.js';

const STUCK_AFTER_MS = ms(STUCK_AFTER);

const stuckCalls = metricMeter.createCounter(
  'order_calls_stuck_total',
  'calls',
  `Activity calls that kept failing through our own fault for ${STUCK_AFTER} (each counted once), by activity`,
);

type Name = keyof Activities & string;
type Args<K extends Name> = Parameters<Activities[K]>;
type Result<K extends Name> = Awaited<ReturnType<Activities[K]>>;

/**
 * A bundle of workflows/activity-proxies.ts that holds the activity: the preset of the call's first
 * round.
 */
type Holding<K extends Name> = Pick<Activities, K>;

/**
 * How long one attempt of a call retried through an outage may run: the longest first-round preset's
 * (money at the provider), so no call is cut shorter than its first round was.
 */
const OUTAGE_ATTEMPT_TIMEOUT = '30s';

/**
 * The call retried through an outage: a regular activity on the workflow's task queue, which the
 * server retries on OUTAGE_BACKOFF, without limit, until it succeeds or fails in a way that ends
 * the call. Those retries write no event; each is one attempt, one action.
 */
function outageActivities(endsIt: FailureKind[]): Activities {
  return proxyActivities<Activities>({
    startToCloseTimeout: OUTAGE_ATTEMPT_TIMEOUT,
    retry: {
      initialInterval: OUTAGE_BACKOFF.first,
      backoffCoefficient: 2,
      maximumInterval: OUTAGE_BACKOFF.cap,
      nonRetryableErrorTypes: errorTypesOf(endsIt),
    },
  });
}

const ONLY_REFUSAL_ENDS: FailureKind[] = ['refused'];
const THEIRS_ENDS_TOO: FailureKind[] = ['refused', 'theirs'];
const untilRefused = outageActivities(ONLY_REFUSAL_ENDS);
const untilTheyFail = outageActivities(THEIRS_ENDS_TOO);

/**
 * Calls an activity until it succeeds or its failure is the caller's to handle
 * (workflows/failures.ts). The first round runs with the call's own preset, as a local activity
 * inside the workflow task, so a blip costs nothing more; a first round that fails through our own
 * fault goes on as a regular activity of the same function, retried by the server on OUTAGE_BACKOFF
 * (workflows/backoff.ts). An outage of any length therefore costs one action per attempt and no
 * history while it lasts. A call that keeps failing for STUCK_AFTER (one timer, raced against it)
 * is made visible — NeedsAttention with the error its first round ended on, a metric, an error log
 * naming the order and the activity — and goes on; the flag clears once the call ends, succeeded, or ended by a
 * failure its caller then handles (and flags, if an operator must act).
 * Each call has a flag of its own: two calls of one activity stuck at once are two items.
 * An outage of ours therefore delays an order, never fails it, and never dead-letters anything.
 */
export class KeepTrying {
  /** Numbers the calls, so each stuck call has its own attention item (deterministic: workflow code order). */
  private calls = 0;

  constructor(
    private readonly orderId: string,
    private readonly attention: Attention,
  ) {}

  /** For our own database and the money we owe: only a refusal ends it. */
  mustSucceed<K extends Name>(activities: Holding<K>, activity: K, ...args: Args<K>): Promise<Result<K>> {
    return this.run(activities, activity, args, ONLY_REFUSAL_ENDS, untilRefused);
  }

  /** For a courtesy or a third party's service: a refusal, or that party staying unavailable, ends it. */
  mayGiveUp<K extends Name>(activities: Holding<K>, activity: K, ...args: Args<K>): Promise<Result<K>> {
    return this.run(activities, activity, args, THEIRS_ENDS_TOO, untilTheyFail);
  }

  private async run<K extends Name>(
    firstRound: Holding<K>,
    activity: K,
    args: Args<K>,
    endsIt: FailureKind[],
    outage: Activities,
  ): Promise<Result<K>> {
    const call = (activities: Holding<K>) => (activities[activity] as (...a: Args<K>) => Promise<Result<K>>)(...args);
    const startedAt = Date.now(); // workflow time: deterministic, skipped by the time-skipping tests
    let firstFailure: unknown;
    try {
      return await call(firstRound);
    } catch (err) {
      const kind = failureKind(err);
      if (kind === undefined || endsIt.includes(kind)) throw err;
      firstFailure = err;
    }

    const item = `stuck:${activity}:${++this.calls}`;
    let flagged = false;
    let ended = false;
    const stuckTimer = new CancellationScope();
    stuckTimer
      .run(() => sleep(Math.max(1, STUCK_AFTER_MS - (Date.now() - startedAt))))
      .then(
        () => {
          if (ended) return; // the call ended in the same task as the timer fired
          flagged = true;
          stuckCalls.add(1, { activity });
          const error = rootCauseMessage(firstFailure);
          log.error('call stuck: still failing, still retrying', { orderId: this.orderId, activity, error });
          this.attention.note(item, `${activity} keeps failing (${error}): it is retried until it succeeds`);
        },
        () => undefined, // cancelled: the call ended first
      );
    let how = 'succeeded';
    try {
      return await call(outage);
    } catch (err) {
      how = 'ended by a failure its caller handles';
      throw err;
    } finally {
      ended = true;
      stuckTimer.cancel();
      if (flagged) {
        log.info(`stuck call ${how}`, { orderId: this.orderId, activity, workflowId: workflowInfo().workflowId });
        this.attention.note(item, null);
      }
    }
  }
}
