import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { databaseOptions, placementOptions, thirdPartyOptions } from './activity-options.js';
import {
  cancelSignal,
  extendDeadlineUpdate,
  paidSignal,
  placeOrderUpdate,
  retryFulfillmentStepUpdate,
  statusQuery,
  type LifecycleStatus,
  type OrderLifecycleInput,
  type PaymentNotice,
  type PlacedOrder,
} from './messages.js';
import { Fulfillment } from './fulfillment.js';
import { NOTIFY_REFUNDS_PATCH } from './patches.js';
import type { CancelReason, OrderStatus, PaymentStatus } from './order-status.js';
import { CustomerIdKey, NeedsAttentionKey, OrderExpiresAtKey, OrderStatusKey } from './search-attributes.js';

const placement = proxyActivities<Activities>(placementOptions);
const database = proxyActivities<Activities>(databaseOptions);
const thirdParty = proxyActivities<Activities>(thirdPartyOptions);

/** How long the workflow waits for the placeOrder update that update-with-start sends with it. */
const PLACEMENT_TIMEOUT = '1 minute';
/** If the timer fired but the database clock says "not yet" (clock skew), look again this soon. */
const NOT_DUE_RECHECK_MS = 100;

/**
 * One order, from placement to a final state: waits for payment until the deadline on a durable
 * timer, and cancels and compensates when the deadline wins. Every decision is a guarded update
 * in the database, so a payment that races the timer is settled exactly once either way.
 */
export async function OrderLifecycle({ orderId, adopt = false }: OrderLifecycleInput): Promise<LifecycleStatus> {
  let order: PlacedOrder | undefined;
  let placementRejected = false;
  let status: OrderStatus | undefined;
  let expiresAt: string | null = null;
  let cancelReason: CancelReason | null = null;
  let cancelRequested = false;
  let deadlineMoved = false;
  let waitingFor = 'the order to be placed';
  const inbox: PaymentNotice[] = [];
  const payments = new Map<string, PaymentStatus>();
  const fulfillment = new Fulfillment(orderId, showDetails);

  setHandler(
    placeOrderUpdate,
    async (request) => {
      try {
        const placed = await placement.placeOrder(request);
        takeOver(placed);
        return placed;
      } catch (err) {
        if (!order) placementRejected = true;
        throw businessCause(err);
      }
    },
    {
      validator: (request) => {
        if (request.orderId !== orderId) throw new Error(`this workflow is for order ${orderId}, not ${request.orderId}`);
      },
    },
  );

  setHandler(paidSignal, (notice) => {
    if (notice.orderId !== orderId || payments.has(notice.paymentId) || inbox.some((n) => n.paymentId === notice.paymentId)) {
      return; // a redelivery (the database would also refuse it) or a notice for another order
    }
    inbox.push(notice);
  });

  setHandler(cancelSignal, () => {
    cancelRequested = true;
  });

  setHandler(
    extendDeadlineUpdate,
    async ({ minutes }) => {
      const extended = await database.extendDeadline({ orderId, minutes }).catch((err: unknown) => {
        throw businessCause(err);
      });
      expiresAt = extended.expiresAt;
      deadlineMoved = true;
      publishSearchAttributes();
      return extended;
    },
    {
      validator: ({ minutes }) => {
        if (!Number.isInteger(minutes) || minutes <= 0) throw new Error('minutes must be a positive whole number');
        if (status !== 'UNPAID') throw ApplicationFailure.nonRetryable('the order is no longer unpaid', 'ORDER_NOT_UNPAID');
      },
    },
  );

  setHandler(
    retryFulfillmentStepUpdate,
    async ({ step }) => ({ step, status: await fulfillment.retry(step) }),
    { validator: ({ step }) => fulfillment.assertRetryable(step) },
  );

  setHandler(statusQuery, snapshot);

  showDetails();
  if (adopt) {
    // Reconciliation found this order without a running workflow: take it over as it stands.
    const existing = await database.loadOrder(orderId);
    if (existing) takeOver(existing);
  } else {
    // The order itself is written by the placeOrder update that arrives with the start.
    await condition(() => order !== undefined || (placementRejected && allHandlersFinished()), PLACEMENT_TIMEOUT);
  }
  if (!order) {
    upsertSearchAttributes([{ key: OrderStatusKey, value: 'REJECTED' }]);
    return finish('nothing: the order was not placed');
  }

  await awaitPaymentOrDeadline();
  // A run that finds its order already CANCELLED (a replayed placement) re-drives compensation:
  // every step is idempotent, so this only repairs what an earlier run could not finish.
  if (status === 'CANCELLED') await compensateCancellation();
  if (status === 'PAID') await fulfil();
  await settleInbox(); // payments that arrived meanwhile are refunded
  return finish(status === 'PAID' ? 'nothing: the order is paid and fulfilled' : 'nothing: the order is cancelled');

  async function awaitPaymentOrDeadline(): Promise<void> {
    let recheckMs: number | undefined;
    while (status === 'UNPAID') {
      waitFor(`payment until ${expiresAt}`);
      const woken = await wakeEarlyOrAfter(() => inbox.length > 0 || cancelRequested || deadlineMoved, recheckMs ?? msUntil(expiresAt!));
      recheckMs = undefined;
      deadlineMoved = false;
      await settleInbox();
      if (status !== 'UNPAID') return;
      if (!cancelRequested && woken) continue;
      const reason: CancelReason = cancelRequested ? 'CUSTOMER' : 'PAYMENT_TIMEOUT';
      cancelRequested = false;
      const result = await database.cancelOrder({ orderId, reason });
      if (result.outcome === 'CANCELLED') {
        status = 'CANCELLED';
        cancelReason = reason;
      } else if (result.outcome === 'NOT_DUE') {
        // The deadline moved, or our clock ran ahead of the database's: wait for the database's deadline.
        expiresAt = result.expiresAt;
        recheckMs = Math.max(msUntil(result.expiresAt), NOT_DUE_RECHECK_MS);
      } else {
        status = result.status;
      }
      publishSearchAttributes();
    }
  }

  /** Only the winner of the guarded cancel gets here, so each step runs for one order once. */
  async function compensateCancellation(): Promise<void> {
    waitFor('stock, coupon and payment intent to be released');
    const released = await Promise.allSettled([
      database.releaseStock(orderId),
      database.releaseCoupon(orderId),
      thirdParty.closePaymentIntent(orderId),
    ]);
    waitFor('the customer to be notified');
    await thirdParty.notifyCustomer({ orderId, template: 'ORDER_CANCELLED' });
    const failed = released.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // Retries are exhausted: fail visibly (a failed workflow, listed by NeedsAttention) rather than hide it.
      upsertSearchAttributes([{ key: NeedsAttentionKey, value: true }]);
      throw failed.reason;
    }
  }

  /** Fulfilment runs while further payments (double payments) are still settled, i.e. refunded. */
  async function fulfil(): Promise<void> {
    waitFor('fulfilment: invoice, notification, loyalty points');
    let fulfilled = false;
    const running = fulfillment.run().then(() => {
      fulfilled = true;
    });
    while (!fulfilled) {
      await condition(() => fulfilled || inbox.length > 0);
      await settleInbox();
    }
    await running;
  }

  async function settleInbox(): Promise<void> {
    const before = waitingFor;
    while (inbox.length > 0) {
      const notice = inbox.shift()!;
      waitFor(`payment ${notice.paymentId} to be settled`);
      const settled = await database.settlePayment(notice);
      payments.set(notice.paymentId, settled.paymentStatus);
      if (settled.outcome === 'PAID') {
        status = 'PAID';
        publishSearchAttributes();
        continue;
      }
      await thirdParty.refundPayment(notice.paymentId);
      payments.set(notice.paymentId, 'REFUNDED');
      if (patched(NOTIFY_REFUNDS_PATCH)) {
        await thirdParty.notifyCustomer({ orderId, template: 'PAYMENT_REFUNDED', key: notice.paymentId });
      }
    }
    waitFor(before);
  }

  function waitFor(what: string): void {
    waitingFor = what;
    showDetails();
  }

  /** The Web UI's "current details": what this order is and what it waits for, in plain words. */
  function showDetails(): void {
    setCurrentDetails(describeOrder(snapshot(), order));
  }

  /** The first placement (or adoption) that succeeds defines the order; replays change nothing. */
  function takeOver(placed: PlacedOrder): void {
    if (order) return;
    order = placed;
    status = placed.status;
    expiresAt = placed.expiresAt;
    publishSearchAttributes();
  }

  function publishSearchAttributes(): void {
    showDetails();
    upsertSearchAttributes([
      { key: OrderStatusKey, value: status ?? 'PLACING' },
      { key: CustomerIdKey, value: order!.customerId },
      { key: OrderExpiresAtKey, value: new Date(expiresAt!) },
    ]);
  }

  async function finish(nextStep: string): Promise<LifecycleStatus> {
    waitFor(nextStep);
    await condition(allHandlersFinished);
    log.info('order lifecycle finished', { orderId, status, workflowId: workflowInfo().workflowId });
    return snapshot();
  }

  function snapshot(): LifecycleStatus {
    return {
      orderId,
      status: status ?? (placementRejected ? 'REJECTED' : 'PLACING'),
      expiresAt,
      cancelReason,
      waitingFor,
      payments: [...payments].map(([paymentId, s]) => ({ paymentId, status: s })),
      fulfillment: status === 'PAID' ? { ...fulfillment.status } : null,
    };
  }
}

function describeOrder(now: LifecycleStatus, order: PlacedOrder | undefined): string {
  const lines = [`**${now.status}**${now.cancelReason ? ` (${now.cancelReason})` : ''}`];
  if (order) lines.push(`${order.customerId} · ${(order.totalCents / 100).toFixed(2)} · deadline ${now.expiresAt}`);
  lines.push(`Waiting for: ${now.waitingFor}`);
  if (now.fulfillment) {
    const steps = Object.entries(now.fulfillment).map(([step, s]) => `${step} ${s}`);
    lines.push(`Fulfilment: ${steps.join(', ')}`);
    const failed = Object.entries(now.fulfillment).filter(([, s]) => s === 'FAILED').map(([step]) => step);
    if (failed.length > 0) lines.push(`Needs attention: fix the cause, then POST /orders/${now.orderId}/fulfillment/${failed[0]}/retry`);
  }
  return lines.join('\n\n');
}

/** condition() with a timeout of 0 would wait forever, so a deadline already past is checked at once. */
async function wakeEarlyOrAfter(woken: () => boolean, ms: number): Promise<boolean> {
  return ms > 0 ? condition(woken, ms) : woken();
}

function msUntil(iso: string): number {
  return Math.max(0, Date.parse(iso) - Date.now());
}

/** An activity's business failure reaches the client as itself, so the API can map its type. */
function businessCause(err: unknown): unknown {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : err;
}
