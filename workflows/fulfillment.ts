import { ApplicationFailure, condition, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { databaseOptions, fulfillmentOptions } from './activity-options.js';
import { FULFILLMENT_STEP_NAMES, FULFILLMENT_STEPS, type FulfillmentStepName, type StepStatus } from './order-status.js';
import { NeedsAttentionKey } from './search-attributes.js';

const steps = proxyActivities<Activities>(fulfillmentOptions);
const database = proxyActivities<Activities>(databaseOptions);

const STEP_ACTIVITY: Record<FulfillmentStepName, (orderId: string) => Promise<void>> = {
  invoice: steps.issueInvoice,
  notification: steps.sendPaymentNotification,
  loyalty: steps.awardLoyaltyPoints,
};

/**
 * What happens after payment, off the payment path: three independent steps, each with its own
 * retries. One failing blocks neither the others nor the payment's answer. A step whose retries
 * run out is the dead letter: FAILED in the database, NeedsAttention on the workflow, and it waits
 * there until an operator retries it.
 */
export class Fulfillment {
  readonly status: Record<FulfillmentStepName, StepStatus> = { invoice: 'PENDING', notification: 'PENDING', loyalty: 'PENDING' };
  private readonly retryRequested = new Set<FulfillmentStepName>();

  constructor(
    private readonly orderId: string,
    /** Called whenever a step's status changes (the workflow's Web UI details follow it). */
    private readonly onChange: () => void = () => undefined,
  ) {}

  get needsAttention(): boolean {
    return Object.values(this.status).includes('FAILED');
  }

  async run(): Promise<void> {
    this.publish();
    await Promise.all(FULFILLMENT_STEP_NAMES.map((step) => this.runStep(step)));
  }

  /** For the retry update's validator: only a FAILED step can be retried. */
  assertRetryable(step: FulfillmentStepName): void {
    if (this.status[step] !== 'FAILED') {
      throw ApplicationFailure.nonRetryable(`the ${step} step is ${this.status[step]}, not FAILED`, 'STEP_NOT_FAILED');
    }
  }

  /** Resolves once the step has left FAILED, i.e. it is running again. */
  async retry(step: FulfillmentStepName): Promise<StepStatus> {
    this.retryRequested.add(step);
    await condition(() => this.status[step] !== 'FAILED');
    return this.status[step];
  }

  private async runStep(step: FulfillmentStepName): Promise<void> {
    for (;;) {
      try {
        await STEP_ACTIVITY[step](this.orderId);
        this.status[step] = 'DONE';
        this.publish();
        return;
      } catch (err) {
        this.status[step] = 'FAILED';
        this.publish();
        await database.markStepFailed({ orderId: this.orderId, step: FULFILLMENT_STEPS[step], error: describe(err) });
        await condition(() => this.retryRequested.has(step));
        this.retryRequested.delete(step);
        await database.reopenStep({ orderId: this.orderId, step: FULFILLMENT_STEPS[step] });
        this.status[step] = 'PENDING';
        this.publish();
      }
    }
  }

  private publish(): void {
    upsertSearchAttributes([{ key: NeedsAttentionKey, value: this.needsAttention }]);
    this.onChange();
  }
}

/** The root cause an operator needs to read: the activity's own error, not the wrapper around it. */
function describe(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(err);
}
