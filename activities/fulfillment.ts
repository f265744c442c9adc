import { Prisma } from '@prisma/client';
import { Context, log } from '@temporalio/activity';
import { STEP_TRANSITIONS, type FulfillmentStep, type StepStatus, type Transition } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import type { ActivityDeps } from './deps.js';
import { stepOf, storedStep, type StoredStep } from '../store/fulfillment-steps.js';
import { statusMove } from '../store/guarded-sql.js';
import { appendOrderEvent } from '../store/order-events.js';

/** Each step of a paid order as recorded, for a run that adopts it; a step without a row has not begun. */
export type RecordedSteps = Partial<Record<FulfillmentStep, { status: StepStatus; error: string | null }>>;

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
   * Moves one order's step along a transition, setting the columns that go with it, and for a move
   * the shop hears about writes its `event` in the same statement; answers whether it moved (0 or 1).
   */
  async function moveStep(
    orderId: string,
    step: FulfillmentStep,
    transition: Transition<StepStatus>,
    columns: Prisma.Sql,
    event?: 'order.fulfillment_step_done' | 'order.fulfillment_step_dead_lettered',
  ): Promise<number> {
    const move = statusMove('fulfillment_steps', transition);
    const { rows } = await query<{ moved: number }>(
      db.pool,
      Prisma.sql`
        WITH moved AS (
          UPDATE fulfillment_steps SET ${move.set}, ${columns}
          WHERE order_id = ${orderId}::uuid AND step = ${storedStep(step)}::"FulfillmentStep" AND ${move.guard}
          RETURNING order_id, last_error)
        ${event === undefined ? Prisma.empty : Prisma.sql`, ${appendOrderEvent({ type: event, changed: { rowOfOrder: 'moved' }, data: stepEventData(event, step) })}`}
        SELECT count(*)::int AS moved FROM moved`,
    );
    return rows[0]!.moved;
  }

  /**
   * Runs one step's effect under the idempotency key `<orderId>:<STEP>`: the service acts once per
   * key, so a retry after an unseen success (or a worker crash between effect and completion) has
   * no second effect. Then the step's row moves PENDING → DONE. A step already DONE (an earlier
   * attempt completed it, and its answer was lost) is not run again: calling a service that is down
   * by now would dead-letter a step the database has finished, and no operator could retry it.
   */
  async function runStep(
    orderId: string,
    step: FulfillmentStep,
    effect: (order: PaidOrder, key: string) => Promise<void>,
  ) {
    const attempted = await moveStep(
      orderId,
      step,
      STEP_TRANSITIONS.attempt,
      Prisma.sql`attempts = ${Context.current().info.attempt}`,
    );
    const { rows } = await query<PaidOrder & { stepStatus: StepStatus | null }>(
      db.pool,
      Prisma.sql`
        SELECT o.id, o.customer_id AS "customerId", o.total_cents AS "totalCents", s.status AS "stepStatus"
        FROM orders o LEFT JOIN fulfillment_steps s ON s.order_id = o.id AND s.step = ${storedStep(step)}::"FulfillmentStep"
        WHERE o.id = ${orderId}::uuid`,
    );
    const order = rows[0];
    if (!order) throw new Error(`${step}: no order ${orderId}`);
    if (attempted === 0 && order.stepStatus === 'DONE') {
      log.info('fulfillment step found done by an earlier attempt', { orderId, step });
      return;
    }
    await effect(order, `${orderId}:${storedStep(step)}`);
    await moveStep(
      orderId,
      step,
      STEP_TRANSITIONS.complete,
      Prisma.sql`completed_at = now(), last_error = NULL`,
      'order.fulfillment_step_done',
    );
  }

  return {
    async issueInvoice(orderId: string): Promise<void> {
      await runStep(orderId, 'invoice', (order, idempotencyKey) =>
        deps.invoices.issue({ idempotencyKey, orderId, customerId: order.customerId, amountCents: order.totalCents }),
      );
    },

    async sendPaymentNotification(orderId: string): Promise<void> {
      await runStep(orderId, 'notification', (order, idempotencyKey) =>
        deps.notifier.send({ idempotencyKey, orderId, customerId: order.customerId, template: 'PAYMENT_RECEIVED' }),
      );
    },

    async awardLoyaltyPoints(orderId: string): Promise<void> {
      await runStep(orderId, 'loyalty', (order, idempotencyKey) =>
        deps.loyalty.award({
          idempotencyKey,
          orderId,
          customerId: order.customerId,
          points: Math.floor(order.totalCents * POINTS_PER_CENT),
        }),
      );
    },

    /**
     * The dead letter: a step whose retries ran out waits, FAILED and visible, for an operator.
     * Answers the status the step is left in: DONE when an attempt the workflow gave up on
     * completed after all (a timed-out attempt still running), and then there is nothing to retry;
     * `changed` when this call made it FAILED (not an earlier run of the same local activity).
     */
    async markStepFailed(input: {
      orderId: string;
      step: FulfillmentStep;
      error: string;
    }): Promise<{ status: 'FAILED' | 'DONE'; changed: boolean }> {
      const failed = await moveStep(
        input.orderId,
        input.step,
        STEP_TRANSITIONS.fail,
        Prisma.sql`failed_at = now(), last_error = ${input.error}`,
        'order.fulfillment_step_dead_lettered',
      );
      if (failed === 0) {
        const { rows } = await query<{ status: StepStatus }>(
          db.pool,
          Prisma.sql`SELECT status FROM fulfillment_steps WHERE order_id = ${input.orderId}::uuid AND step = ${storedStep(input.step)}::"FulfillmentStep"`,
        );
        if (rows[0]?.status === 'DONE') {
          log.warn('fulfillment step given up on had completed after all: nothing to retry', input);
          return { status: 'DONE', changed: false };
        }
      }
      log.error('fulfillment step failed and needs an operator', input);
      return { status: 'FAILED', changed: failed === 1 };
    },

    /** The steps as recorded, for a run that takes over an order paid in an earlier run or without one. */
    async loadFulfillment(orderId: string): Promise<RecordedSteps> {
      const { rows } = await query<{ step: StoredStep; status: StepStatus; last_error: string | null }>(
        db.pool,
        Prisma.sql`SELECT step, status, last_error FROM fulfillment_steps WHERE order_id = ${orderId}::uuid`,
      );
      const recorded: RecordedSteps = {};
      for (const row of rows) recorded[stepOf(row.step)] = { status: row.status, error: row.last_error };
      return recorded;
    },

    /** An operator's retry: FAILED → PENDING, then the workflow runs the step again. */
    async reopenStep(input: { orderId: string; step: FulfillmentStep }): Promise<{ reopened: boolean }> {
      const reopened = await moveStep(input.orderId, input.step, STEP_TRANSITIONS.retry, Prisma.sql`attempts = 0`);
      log.info('fulfillment step retried by an operator', input);
      return { reopened: reopened === 1 };
    },
  };
}

/** A step's event `data`: the step by its one name, and for the dead letter the last error. */
function stepEventData(
  event: 'order.fulfillment_step_done' | 'order.fulfillment_step_dead_lettered',
  step: FulfillmentStep,
): Record<string, Prisma.Sql> {
  const data = { step: Prisma.sql`${step}::text` };
  return event === 'order.fulfillment_step_done' ? data : { ...data, error: Prisma.sql`c.last_error` };
}
