import { condition } from '@temporalio/workflow';
import type { RecordedSteps } from '../activities/fulfillment.js';
import { businessFailure } from '../domain/errors.js';
import { FULFILLMENT_STEPS, type FulfillmentStep, type StepStatus } from '../domain/statuses.js';
import { database, fulfillment } from './activity-proxies.js';
import type { Attention } from './attention.js';
import { failureKind, rootCauseMessage } from './failures.js';
import type { KeepTrying } from './keep-trying.js';
import type { Waits } from './waits.js';

/** The activity that performs each fulfillment step. */
const PERFORM: Record<FulfillmentStep, keyof typeof fulfillment> = {
  invoice: 'issueInvoice',
  notification: 'sendPaymentNotification',
  loyalty: 'awardLoyaltyPoints',
};

/**
 * What happens after payment, off the payment path: three independent steps, each with its own
 * retries. One failing blocks neither the others nor the payment's answer. A step the downstream
 * service still refuses or fails after its retries is the dead letter: FAILED in the database,
 * NeedsAttention on the workflow, and it waits there until an operator retries it. Our own
 * database being down dead-letters nothing: the step is tried again until it gets through.
 */
export class Fulfillment {
  readonly status: Record<FulfillmentStep, StepStatus> = {
    invoice: 'PENDING',
    notification: 'PENDING',
    loyalty: 'PENDING',
  };
  private readonly retryRequested = new Set<FulfillmentStep>();

  constructor(
    private readonly orderId: string,
    private readonly keepTrying: KeepTrying,
    /** Holds the FAILED steps; its details show every step's status. */
    private readonly attention: Attention,
    /** A FAILED step holds the run for an operator (WaitingFor). */
    private readonly waits: Waits,
  ) {}

  async run(): Promise<void> {
    await Promise.all(FULFILLMENT_STEPS.map((step) => this.runStep(step)));
  }

  /**
   * A run that takes over an order paid in an earlier run or without one (adopted, or a placement
   * retried after the run ended) starts from the steps as recorded: a DONE step is not run again,
   * and a FAILED one is the dead letter it was, waiting for an operator's retry.
   */
  resume(recorded: RecordedSteps): void {
    for (const step of FULFILLMENT_STEPS) {
      const seen = recorded[step];
      if (seen?.status === 'DONE') this.move(step, 'DONE', null);
      if (seen?.status === 'FAILED') this.move(step, 'FAILED', seen.error ?? 'no error recorded');
    }
  }

  /** For the retry update's validator: only a FAILED step can be retried. */
  assertRetryable(step: FulfillmentStep): void {
    if (this.status[step] !== 'FAILED') throw businessFailure('STEP_NOT_FAILED', { step, status: this.status[step] });
  }

  /** Resolves once the step has left FAILED, i.e. it is running again. */
  async retry(step: FulfillmentStep): Promise<StepStatus> {
    this.retryRequested.add(step);
    await condition(() => this.status[step] !== 'FAILED');
    return this.status[step];
  }

  private async runStep(step: FulfillmentStep): Promise<void> {
    const { orderId } = this;
    for (;;) {
      if (this.status[step] === 'DONE') return;
      if (this.status[step] === 'PENDING') {
        try {
          await this.keepTrying.mayGiveUp(fulfillment, PERFORM[step], orderId);
          this.move(step, 'DONE', null);
          return;
        } catch (err) {
          if (failureKind(err) === undefined) throw err;
          const error = rootCauseMessage(err);
          this.move(step, 'FAILED', error);
          const recorded = await this.keepTrying.mustSucceed(database, 'markStepFailed', { orderId, step, error });
          // An attempt given up on (timed out while still running) may have completed after all.
          if (recorded.status === 'DONE') {
            this.move(step, 'DONE', null);
            return;
          }
        }
      }
      // FAILED: the dead letter, until an operator retries the step.
      await condition(() => this.retryRequested.has(step));
      this.retryRequested.delete(step);
      await this.keepTrying.mustSucceed(database, 'reopenStep', { orderId, step });
      this.move(step, 'PENDING', null);
    }
  }

  /** `error`: why a step is FAILED, the dead letter an operator must act on. */
  private move(step: FulfillmentStep, status: StepStatus, error: string | null): void {
    this.status[step] = status;
    if (error === null) {
      this.attention.note(`fulfillment:${step}`, null);
      this.waits.note(`fulfillment:${step}`, null);
      return;
    }
    const failed = `fulfillment step ${step} failed (${error})`;
    const retry = `POST /orders/${this.orderId}/fulfillment/${step}/retry`;
    this.attention.note(`fulfillment:${step}`, `${failed}: fix the cause, then ${retry}`);
    this.waits.note(`fulfillment:${step}`, { on: 'OPERATOR', since: Date.now(), detail: failed });
  }
}
