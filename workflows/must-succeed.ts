import { log, metricMeter, patched } from '@temporalio/workflow';
import { STEP_STUCK_AFTER } from './activity-options.js';
import type { Attention } from './attention.js';
import { isActivityFailure, isStuck, isTheirs, rootCauseMessage } from './failures.js';
import { SETTLE_EVERY_PAYMENT_PATCH } from './patches.js';

const stuckSteps = metricMeter.createCounter(
  'order_steps_stuck_total',
  'steps',
  `Steps that kept failing through our own fault: for ${STEP_STUCK_AFTER} (counted again each further ${STEP_STUCK_AFTER}), or through a bounded step's retries, by step`,
);

/**
 * Runs a step until it succeeds or is refused by someone else: a business refusal or the third
 * party's own failure (isTheirs) is the caller's to handle; a failure of ours never ends it. Steps
 * that must succeed (our database, money we owe) retry without limit, each call bounded by
 * STEP_STUCK_AFTER; a bounded step (a notice, a fulfillment step) may run out of retries while our
 * database is down. Either way the step is made visible — NeedsAttention, a metric, an error log
 * naming the order and the step — and called again; the flag clears once it succeeds. An outage of
 * ours therefore delays a run, never fails it, and never dead-letters anything.
 */
export class MustSucceed {
  constructor(
    private readonly orderId: string,
    private readonly attention: Attention,
  ) {}

  async run<T>(step: string, call: () => Promise<T>): Promise<T> {
    for (let rounds = 1; ; rounds++) {
      try {
        const result = await call();
        if (rounds > 1) {
          log.info('stuck step succeeded', { orderId: this.orderId, step });
          this.attention.note(`stuck:${step}`, null);
        }
        return result;
      } catch (err) {
        if (!isActivityFailure(err)) throw err;
        // Stuck first: a step that must succeed ran out of time, whoever's failure its last attempt
        // was (a provider down for long is no reason to give up a refund). Then: a bounded step
        // that a business refusal or the provider ended is the caller's; one ended by our own
        // failure goes on. Stuck calls cannot occur in runs from before the rule.
        if (!isStuck(err) && (isTheirs(err) || !patched(SETTLE_EVERY_PAYMENT_PATCH))) throw err;
        const error = rootCauseMessage(err);
        stuckSteps.add(1, { step });
        log.error('step stuck: still failing, still retrying', { orderId: this.orderId, step, rounds, error });
        this.attention.note(
          `stuck:${step}`,
          `${step} keeps failing (${error}; round ${rounds}): it is retried until it succeeds`,
        );
      }
    }
  }
}
