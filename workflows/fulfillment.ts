import { ApplicationFailure, condition, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { databaseOptions, fulfillmentOptions } from './activity-options.js';
import type { Attention } from './attention.js';
import { rootCauseMessage } from './failures.js';
import type { MustSucceed } from './must-succeed.js';
import {
  FULFILLMENT_STEP_NAMES,
  FULFILLMENT_STEPS,
  type FulfillmentStepName,
  type StepStatus,
} from '../domain/statuses.js';

const steps = proxyActivities<Activities>(fulfillmentOptions);
const database = proxyActivities<Activities>(databaseOptions);

const STEP_ACTIVITY_NAME = {
  invoice: 'issueInvoice',
  notification: 'sendPaymentNotification',
  loyalty: 'awardLoyaltyPoints',
} as const satisfies Record<FulfillmentStepName, keyof Activities>;
const STEP_ACTIVITY: Record<FulfillmentStepName, (orderId: string) => Promise<void>> = {
  invoice: steps[STEP_ACTIVITY_NAME.invoice],
  notification: steps[STEP_ACTIVITY_NAME.notification],
  loyalty: steps[STEP_ACTIVITY_NAME.loyalty],
};

/**
 * What happens after payment, off the payment path: three independent steps, each with its own
 * retries. One failing blocks neither the others nor the payment's answer. A step the downstream
 * service still fails after its retries is the dead letter: FAILED in the database, NeedsAttention
 * on the workflow, and it waits there until an operator retries it. Our own database being down
 * dead-letters nothing: the step is tried again until it gets through (MustSucceed).
 */
export class Fulfillment {
  readonly status: Record<FulfillmentStepName, StepStatus> = {
    invoice: 'PENDING',
    notification: 'PENDING',
    loyalty: 'PENDING',
  };
  private readonly retryRequested = new Set<FulfillmentStepName>();

  constructor(
    private readonly orderId: string,
    private readonly mustSucceed: MustSucceed,
    /** Holds the FAILED steps; told whenever a step's status changes. */
    private readonly attention: Attention,
  ) {}

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
        await this.mustSucceed.run(STEP_ACTIVITY_NAME[step], () => STEP_ACTIVITY[step](this.orderId));
        this.status[step] = 'DONE';
        this.publish();
        return;
      } catch (err) {
        const error = rootCauseMessage(err);
        this.status[step] = 'FAILED';
        this.attention.set(
          `fulfillment:${step}`,
          `fulfillment step ${step} failed (${error}): fix the cause, then POST /orders/${this.orderId}/fulfillment/${step}/retry`,
        );
        this.publish();
        await this.mustSucceed.run('markStepFailed', () =>
          database.markStepFailed({ orderId: this.orderId, step: FULFILLMENT_STEPS[step], error }),
        );
        await condition(() => this.retryRequested.has(step));
        this.retryRequested.delete(step);
        await this.mustSucceed.run('reopenStep', () =>
          database.reopenStep({ orderId: this.orderId, step: FULFILLMENT_STEPS[step] }),
        );
        this.status[step] = 'PENDING';
        this.attention.set(`fulfillment:${step}`, null);
        this.publish();
      }
    }
  }

  private publish(): void {
    this.attention.changed();
  }
}
