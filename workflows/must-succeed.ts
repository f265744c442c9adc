import { log, metricMeter } from '@temporalio/workflow';
import { STEP_STUCK_AFTER } from './activity-options.js';
import type { Attention } from './attention.js';
import { isStuck, rootCauseMessage } from './failures.js';

const stuckSteps = metricMeter.createCounter(
  'order_steps_stuck_total',
  'steps',
  `Steps that must succeed and kept failing for ${STEP_STUCK_AFTER} (counted again each further ${STEP_STUCK_AFTER}), by step`,
);

/**
 * Runs the steps that must succeed however long it takes: our own database writes and the money we
 * owe. Their activities retry without limit, each call bounded by STEP_STUCK_AFTER. A call that
 * comes back stuck is made visible — NeedsAttention, a metric, an error log naming the order and
 * the step — and made again; the flag clears once the step succeeds. An outage therefore delays a
 * run, never fails it. Anything else (a business failure, a rejection for good) is the caller's.
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
        if (!isStuck(err)) throw err;
        const error = rootCauseMessage(err);
        stuckSteps.add(1, { step });
        log.error('step stuck: still failing, still retrying', { orderId: this.orderId, step, rounds, error });
        this.attention.note(`stuck:${step}`, `${step} has failed for ${rounds} × ${STEP_STUCK_AFTER} (${error}); it is retried until it succeeds`);
      }
    }
  }
}
