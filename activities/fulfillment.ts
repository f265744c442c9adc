import { Context, log } from '@temporalio/activity';
import { STEP_TRANSITIONS, type FulfillmentStep } from '../domain/statuses.js';
import type { ActivityDeps } from './deps.js';
import { stepStatusIn } from './sql.js';

interface PaidOrder {
  id: string;
  customerId: string;
  totalCents: number;
}

/** One loyalty point per whole currency unit paid. */
const POINTS_PER_CENT = 1 / 100;

export function createFulfillmentActivities(deps: ActivityDeps) {
  const { db } = deps;

  /**
   * Runs one step's effect under the idempotency key `<orderId>:<STEP>`: the service acts once per
   * key, so a retry after an unseen success (or a worker crash between effect and completion) has
   * no second effect. Then the step's row moves PENDING → DONE.
   */
  async function runStep(orderId: string, step: FulfillmentStep, effect: (order: PaidOrder, key: string) => Promise<void>) {
    const attempt = Context.current().info.attempt;
    await db.$executeRaw`
      UPDATE fulfillment_steps SET attempts = ${attempt}
      WHERE order_id = ${orderId}::uuid AND step = ${step}::"FulfillmentStep" AND status = 'PENDING'`;
    const order = await db.order.findUniqueOrThrow({ where: { id: orderId }, select: { id: true, customerId: true, totalCents: true } });
    await effect(order, `${orderId}:${step}`);
    await db.$executeRaw`
      UPDATE fulfillment_steps SET status = ${STEP_TRANSITIONS.complete.to}::"StepStatus", completed_at = now(), last_error = NULL
      WHERE order_id = ${orderId}::uuid AND step = ${step}::"FulfillmentStep" AND ${stepStatusIn(STEP_TRANSITIONS.complete.from)}`;
  }

  return {
    async issueInvoice(orderId: string): Promise<void> {
      await runStep(orderId, 'INVOICE', (order, idempotencyKey) =>
        deps.invoices.issue({ idempotencyKey, orderId, customerId: order.customerId, amountCents: order.totalCents }),
      );
    },

    async sendPaymentNotification(orderId: string): Promise<void> {
      await runStep(orderId, 'NOTIFICATION', (order, idempotencyKey) =>
        deps.notifier.send({ idempotencyKey, orderId, customerId: order.customerId, template: 'PAYMENT_RECEIVED' }),
      );
    },

    async awardLoyaltyPoints(orderId: string): Promise<void> {
      await runStep(orderId, 'LOYALTY', (order, idempotencyKey) =>
        deps.loyalty.award({ idempotencyKey, orderId, customerId: order.customerId, points: Math.floor(order.totalCents * POINTS_PER_CENT) }),
      );
    },

    /** The dead letter: a step whose retries ran out waits, FAILED and visible, for an operator. */
    async markStepFailed(input: { orderId: string; step: FulfillmentStep; error: string }): Promise<void> {
      await db.$executeRaw`
        UPDATE fulfillment_steps SET status = ${STEP_TRANSITIONS.fail.to}::"StepStatus", failed_at = now(), last_error = ${input.error}
        WHERE order_id = ${input.orderId}::uuid AND step = ${input.step}::"FulfillmentStep" AND ${stepStatusIn(STEP_TRANSITIONS.fail.from)}`;
      log.error('fulfillment step failed and needs an operator', input);
    },

    /** An operator's retry: FAILED → PENDING, then the workflow runs the step again. */
    async reopenStep(input: { orderId: string; step: FulfillmentStep }): Promise<{ reopened: boolean }> {
      const reopened = await db.$executeRaw`
        UPDATE fulfillment_steps SET status = ${STEP_TRANSITIONS.retry.to}::"StepStatus", attempts = 0
        WHERE order_id = ${input.orderId}::uuid AND step = ${input.step}::"FulfillmentStep" AND ${stepStatusIn(STEP_TRANSITIONS.retry.from)}`;
      log.info('fulfillment step retried by an operator', input);
      return { reopened: reopened === 1 };
    },
  };
}
