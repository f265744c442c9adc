import { Prisma } from '@prisma/client';
import { Context, getClient, log } from '@temporalio/activity';
import {
  failedRefundWorkflowId,
  latePaymentWorkflowId,
  ORDER_WORKFLOW_TYPE,
  orderLifecycleInput,
  orderWorkflowId,
  type PaymentSweepPosition,
  type ReconciliationInput,
  type SweepPosition,
} from '../domain/messages.js';
import {
  INITIAL_STATUS,
  ORDER_TRANSITIONS,
  PAYMENT_TRANSITIONS,
  STEP_STATUSES,
  type PaymentStatus,
} from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import { asOf, type ActivityDeps } from './deps.js';
import { nowOr, statusIn } from '../store/guarded-sql.js';
import { handOverPayment } from '../handover/payment-handover.js';
import { anyRunning, isRunning } from '../handover/workflow-runs.js';
import { refundDueUnclaimedPayments, type UnclaimedRefunds } from './unclaimed-payments.js';

export interface SweepResult extends UnclaimedRefunds {
  /** Orders examined: UNPAID past deadline plus grace, PAID with fulfillment unfinished that long after payment. */
  scanned: number;
  /** Those whose workflow was not running, now handed to a new OrderLifecycle run. */
  adopted: string[];
  /**
   * Payments still unsettled (UNSETTLED_PAYMENTS) that long after they arrived, handed to Temporal
   * again: their webhook's hand-over may never have succeeded, or the run refunding one was lost.
   */
  handedOver: string[];
  /**
   * Payments still unsettled although their settlement completed: nothing will settle them, so a
   * person must (logged as an error and counted each time a pass of the sweeps comes round to one).
   */
  unsettledAfterSettlement: string[];
  /** Where the next sweep goes on among the orders; null when this one reached the newest, so the next starts over. */
  resumeAfter: SweepPosition | null;
  /** The same among the unsettled payments. */
  paymentsResumeAfter: PaymentSweepPosition | null;
}

/**
 * Unsettled payments handed over per sweep: each is one or two calls to Temporal, and the sweep has
 * 10 s (workflows/activity-options.ts). After a long outage a backlog drains at this pace per interval.
 */
export const PAYMENT_SWEEP_LIMIT = 50;

/**
 * The share of its start-to-close timeout a sweep spends examining, unless its input says otherwise.
 * One call to Temporal per order takes 1-2 ms next to the server, tens of milliseconds to a remote
 * cluster: a sweep that ran out its timeout would be retried from the same place, and every sweep
 * after it too, never getting past the orders it could not finish. One that stops in time returns
 * where it got to.
 */
const TIME_BUDGET_SHARE = 0.5;

/**
 * Payments whose money no decision has settled yet: RECEIVED (not decided), and REFUND_PENDING (owed
 * back, the refund not made). A run holds each until it is settled; if that run is lost, nothing
 * else would move it.
 */
const UNSETTLED_PAYMENTS = [INITIAL_STATUS.payment, PAYMENT_TRANSITIONS.oweBack.to];

/** A fulfillment step still owed: not DONE. */
const UNFINISHED_STEPS = STEP_STATUSES.filter((status) => status !== 'DONE');

export function createReconciliationActivities(deps: ActivityDeps) {
  const { db } = deps;

  async function stillWaiting(orderId: string, dueBefore: Prisma.Sql): Promise<boolean> {
    const { rows } = await query<{ waiting: boolean }>(
      db.pool,
      Prisma.sql`SELECT EXISTS (SELECT 1 FROM (${waitingOrders(dueBefore)}) AS waiting WHERE id = ${orderId}::uuid) AS waiting`,
    );
    return rows[0]!.waiting;
  }

  async function stillUnsettled(paymentId: string): Promise<boolean> {
    const { rows } = await query<{ unsettled: boolean }>(
      db.pool,
      Prisma.sql`SELECT EXISTS (SELECT 1 FROM payments p WHERE p.payment_id = ${paymentId}
        AND p.${statusIn('payments', UNSETTLED_PAYMENTS)}) AS unsettled`,
    );
    return rows[0]!.unsettled;
  }

  /**
   * A payment is settled from its record by the run it is handed to (api/routes/payments.ts). One
   * still RECEIVED after the grace period, for an order already decided, was recorded but its
   * hand-over may have failed every time the provider delivered it (Temporal down for longer than
   * the provider retries): without this it would wait for ever, money taken for an order that may
   * be cancelled. Handed over again, as the webhook does it, it is settled (a run drops a notice it
   * already has), or refunded if late. One still REFUND_PENDING that long is owed back and its refund
   * not made: while a run that may hold it is running (the order's, the payment's late settlement,
   * its failed refund's) that run is left to it, through a provider outage if need be, since a
   * second run refunding it beside the first could both end up holding it; once none is, the run
   * was lost (terminated by hand, a namespace restored from backup), and it is handed over, to a
   * late settlement, which refunds it. An order still UNPAID is left to its run, or to its adoption
   * above, which decide it from the same record; its payments come here once it is decided.
   *
   * Like the orders, the payments are taken oldest first after where the last sweep stopped: one
   * that stays unsettled (its settlement completed, or its run holds it through a provider outage)
   * would otherwise stay among the oldest of every sweep, and enough of them would keep a newer one
   * from ever being handed over.
   */
  async function handOverUnsettledPayments(
    input: ReconciliationInput & { paymentsResumeAfter: PaymentSweepPosition | null },
    dueBefore: Prisma.Sql,
    inTime: () => boolean,
  ): Promise<Pick<SweepResult, 'handedOver' | 'unsettledAfterSettlement' | 'paymentsResumeAfter'>> {
    const limit = input.paymentLimit ?? PAYMENT_SWEEP_LIMIT;
    const after = input.paymentsResumeAfter
      ? Prisma.sql`AND (p.received_at, p.payment_id) > (${input.paymentsResumeAfter.receivedAt}::timestamptz, ${input.paymentsResumeAfter.paymentId})`
      : Prisma.empty;
    const { rows } = await query<{
      payment_id: string;
      order_id: string;
      amount_cents: number;
      status: PaymentStatus;
      received_at: Date;
    }>(
      db.pool,
      Prisma.sql`
        SELECT p.payment_id, p.order_id, p.amount_cents, p.status, p.received_at FROM payments p JOIN orders o ON o.id = p.order_id
        WHERE p.${statusIn('payments', UNSETTLED_PAYMENTS)} AND p.received_at < ${dueBefore}
          AND NOT o.${statusIn('orders', ORDER_TRANSITIONS.cancel.from)}
          ${after}
        ORDER BY p.received_at, p.payment_id
        LIMIT ${limit}`,
    );
    const client = getClient();
    const handedOver: string[] = [];
    const unsettledAfterSettlement: string[] = [];
    let examined = 0;
    for (const row of rows) {
      if (examined > 0 && !inTime()) break; // at least one, so that every sweep gets further
      examined++;
      const paymentId = row.payment_id;
      const mayHoldIt = [
        orderWorkflowId(row.order_id),
        latePaymentWorkflowId(paymentId),
        failedRefundWorkflowId(paymentId),
      ];
      if (row.status === PAYMENT_TRANSITIONS.oweBack.to && (await anyRunning(client, mayHoldIt))) continue;
      const outcome = await handOverPayment(client, input.taskQueue, {
        paymentId,
        orderId: row.order_id,
        amountCents: row.amount_cents,
      });
      if (outcome !== 'settlement-exists') handedOver.push(paymentId);
      // One still running will settle it; one that completed and left it unsettled never will (read
      // again: one that was running a moment ago may have just settled it).
      else if (
        !(await isRunning(client.workflow.getHandle(latePaymentWorkflowId(paymentId)))) &&
        (await stillUnsettled(paymentId))
      )
        unsettledAfterSettlement.push(paymentId);
    }
    if (handedOver.length > 0) {
      log.warn('reconciliation handed over payments still unsettled: a webhook hand-over was lost', { handedOver });
    }
    if (unsettledAfterSettlement.length > 0) {
      log.error('payments still unsettled after their settlement completed: check each by hand (refund or capture)', {
        paymentIds: unsettledAfterSettlement,
      });
    }
    const last = rows[examined - 1];
    return {
      handedOver,
      unsettledAfterSettlement,
      paymentsResumeAfter:
        last && (examined < rows.length || rows.length === limit)
          ? { receivedAt: last.received_at.toISOString(), paymentId: last.payment_id }
          : null,
    };
  }

  return {
    /**
     * The old scan job, narrowed to a safety net for orders whose run is gone: UNPAID past their
     * deadline plus a grace period, and PAID whose fulfillment is unfinished that long after payment
     * (paid by a late settlement after the run was lost, or the run lost while fulfilling). An order
     * whose workflow is still running is left to it; one whose workflow is gone gets a new
     * OrderLifecycle run that adopts it: the same guarded cancel, or the fulfillment from its
     * recorded steps.
     * Any hit means a trigger was lost upstream.
     *
     * A sweep examines `limit` orders, oldest first, starting after where the last one stopped, so
     * orders still held by live runs (a provider outage holds thousands) cannot keep a stranded one
     * out of every sweep: each is reached within a pass over the whole set. It also stops when its
     * time budget is spent (`timeBudgetMs`), and the next sweep goes on from there.
     */
    async sweepStrandedOrders(
      input: ReconciliationInput & {
        resumeAfter: SweepPosition | null;
        paymentsResumeAfter: PaymentSweepPosition | null;
      },
    ): Promise<SweepResult> {
      const started = Date.now();
      const budgetMs = input.timeBudgetMs ?? TIME_BUDGET_SHARE * Context.current().info.startToCloseTimeoutMs;
      const now = await asOf(deps);
      const dueBefore = Prisma.sql`${nowOr(now)} - ${input.graceMs} * interval '1 millisecond'`;
      // The payments first, within half the budget: money waits on them, and thousands of orders held
      // by live runs could otherwise spend it all. The orders get what is left.
      const payments = await handOverUnsettledPayments(input, dueBefore, () => Date.now() < started + budgetMs / 2);
      // Then money taken for no order of ours whose grace has passed, within the same half.
      const unclaimed = await refundDueUnclaimedPayments(deps, now, () => Date.now() < started + budgetMs / 2);
      const inTime = () => Date.now() < started + budgetMs;
      const after = input.resumeAfter
        ? Prisma.sql`WHERE (since, id) > (${input.resumeAfter.since}::timestamptz, ${input.resumeAfter.orderId}::uuid)`
        : Prisma.empty;
      const { rows: stranded } = await query<{ id: string; since: Date }>(
        db.pool,
        Prisma.sql`
          SELECT id, since FROM (${waitingOrders(dueBefore)}) AS waiting
          ${after}
          ORDER BY since, id
          LIMIT ${input.limit}`,
      );
      const client = getClient();
      const adopted: string[] = [];
      let examined = 0;
      for (const { id } of stranded) {
        if (examined > 0 && !inTime()) break; // at least one, so that every sweep gets further
        examined++;
        const workflowId = orderWorkflowId(id);
        if (await isRunning(client.workflow.getHandle(workflowId))) continue;
        // Its run may have finished the order between the scan and the look at Temporal.
        if (!(await stillWaiting(id, dueBefore))) continue;
        // USE_EXISTING: if a run appeared since we looked, it is kept and nothing new starts.
        await client.workflow.start(ORDER_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: input.taskQueue,
          args: [orderLifecycleInput(id, { adopt: true })],
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        adopted.push(id);
      }
      if (adopted.length > 0) {
        log.warn('reconciliation adopted orders whose workflow was gone: a trigger was lost upstream', { adopted });
      }
      const last = stranded[examined - 1];
      return {
        scanned: examined,
        adopted,
        resumeAfter:
          last && (examined < stranded.length || stranded.length === input.limit)
            ? { since: last.since.toISOString(), orderId: last.id }
            : null,
        ...payments,
        ...unclaimed,
      };
    },
  };
}

/**
 * Orders that wait on a run, more than the grace period: UNPAID past their deadline, and PAID with
 * a fulfillment step not DONE since their payment. `since` is the moment they began to wait.
 */
function waitingOrders(dueBefore: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT id, expires_at AS since FROM orders
    WHERE ${statusIn('orders', ORDER_TRANSITIONS.cancel.from)} AND expires_at < ${dueBefore}
    UNION ALL
    SELECT id, paid_at AS since FROM orders
    WHERE ${statusIn('orders', [ORDER_TRANSITIONS.pay.to])} AND paid_at < ${dueBefore}
      AND id IN (SELECT order_id FROM fulfillment_steps WHERE ${statusIn('fulfillment_steps', UNFINISHED_STEPS)})`;
}
