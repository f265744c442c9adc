import { log, metricMeter, sleep, workflowInfo } from '@temporalio/workflow';
import ms from 'ms';
import type { CallOutage } from '../domain/messages.js';
import { STUCK_AFTER } from './activity-options.js';
import type { Attention } from './attention.js';
import { Backoff, OUTAGE_BACKOFF } from './backoff.js';
import { failureKind, rootCauseMessage, type FailureKind } from './failures.js';

const STUCK_AFTER_MS = ms(STUCK_AFTER);

const stuckCalls = metricMeter.createCounter(
  'order_calls_stuck_total',
  'calls',
  `Activity calls that kept failing through our own fault for ${STUCK_AFTER} (counted again each further ${STUCK_AFTER}), by activity`,
);

/**
 * Between two rounds of a failing call: where its run may continue as new (workflows/order-run.ts),
 * handing over the call's outage so far.
 */
export type BetweenRounds = (outage: CallOutage) => Promise<void>;

/**
 * Calls an activity round after round (its preset bounds a round, workflows/activity-options.ts)
 * until it succeeds or its failure is the caller's to handle (workflows/failures.ts). Rounds are
 * spaced by OUTAGE_BACKOFF (workflows/backoff.ts) on a durable timer, so an outage of any length
 * costs a bounded number of events an hour. A call that keeps failing for STUCK_AFTER is made
 * visible — NeedsAttention with what is failing, a metric, an error log naming the order and the
 * activity — and goes on; the flag clears once the call ends, succeeded, or ended by a failure its
 * caller then handles (and flags, if an operator must act).
 * Each call has a flag of its own: two calls of one activity stuck at once are two items.
 * An outage of ours therefore delays an order, never fails it, and never dead-letters anything.
 */
export class KeepTrying {
  /** Numbers the calls, so each stuck call has its own attention item (deterministic: workflow code order). */
  private calls = 0;

  constructor(
    private readonly orderId: string,
    private readonly attention: Attention,
    private readonly continuing: {
      /** Called between rounds; absent, a run never continues as new from a call. */
      betweenRounds?: BetweenRounds;
      /** The outage of the call the previous run was making when it continued as new: the first call takes it over. */
      carried?: CallOutage;
    } = {},
  ) {}

  /** For our own database and the money we owe: only a refusal ends it. */
  mustSucceed<T>(activity: string, call: () => Promise<T>): Promise<T> {
    return this.run(activity, call, ['refused']);
  }

  /** For a courtesy or a third party's service: a refusal, or that party staying unavailable, ends it. */
  mayGiveUp<T>(activity: string, call: () => Promise<T>): Promise<T> {
    return this.run(activity, call, ['refused', 'theirs']);
  }

  private async run<T>(activity: string, call: () => Promise<T>, endsIt: FailureKind[]): Promise<T> {
    // The previous run's outage goes on in this run's first call (an adopting run's loadOrder), so a
    // flag raised before continuing as new stays raised, and is cleared by that call's end.
    const carried = this.continuing.carried;
    this.continuing.carried = undefined;
    const startedAt = carried?.since ?? Date.now(); // workflow time: deterministic, skipped by the time-skipping tests
    const item = `stuck:${activity}:${++this.calls}`;
    let periodsCounted = carried?.periods ?? 0;
    const backoff = new Backoff(OUTAGE_BACKOFF);
    const ended = (how: string) => {
      if (periodsCounted === 0) return;
      log.info(`stuck call ${how}`, { orderId: this.orderId, activity, workflowId: workflowInfo().workflowId });
      this.attention.note(item, null);
    };
    for (let round = 1; ; round++) {
      try {
        const result = await call();
        ended('succeeded');
        return result;
      } catch (err) {
        const kind = failureKind(err);
        if (kind === undefined || endsIt.includes(kind)) {
          ended('ended by a failure its caller handles');
          throw err;
        }
        const periods = Math.floor((Date.now() - startedAt) / STUCK_AFTER_MS);
        if (periods > periodsCounted || (round === 1 && periodsCounted > 0)) {
          if (periods > periodsCounted) stuckCalls.add(periods - periodsCounted, { activity });
          periodsCounted = periods;
          const error = rootCauseMessage(err);
          log.error('call stuck: still failing, still retrying', { orderId: this.orderId, activity, round, error });
          this.attention.note(item, `${activity} keeps failing (${error}): it is retried until it succeeds`);
        }
        await this.continuing.betweenRounds?.({ since: startedAt, periods: periodsCounted });
        await sleep(backoff.next());
      }
    }
  }
}
