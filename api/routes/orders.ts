import { createHash } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import type { ApiMetrics } from '../metrics.js';
import {
  cancelSignal,
  extendDeadlineUpdate,
  extensionUpdateId,
  forceCancelUpdate,
  ORDER_WORKFLOW_TYPE,
  orderLifecycleInput,
  orderSummary,
  orderWorkflowId,
  placeOrderUpdate,
  type PlaceOrderRequest,
} from '../../domain/messages.js';
import { orderAttributesAtStart } from '../../domain/search-attributes.js';
import type { OrderLifecycle } from '../../workflows/order-lifecycle.js';
import { actingFor, mayReach, type Caller } from '../auth.js';
import type { CheckoutPriority } from '../checkout-priority.js';
import type { CouponAttempts } from '../coupon-attempts.js';
import type { ApiHandler } from '../endpoint-table.js';
import { ApiError, businessError } from '../errors.js';
import { findOrderView, listOrderViews } from '../order-view.js';
import { newOrderId } from '../order-ids.js';
import type { OrderView } from '../responses.js';
import type { CreateOrderBody } from '../schemas.js';
import { callTemporal } from '../temporal-errors.js';
import { whileUnpaid } from '../unpaid-order.js';
import { isOpen } from '../../domain/statuses.js';

export interface PlaceOrderDeps {
  temporal: Client;
  taskQueue: string;
  orderIdSecret: string;
  metrics: ApiMetrics;
  checkoutPriority: CheckoutPriority;
  couponAttempts: CouponAttempts;
  /** How long an order stays unpaid (config: PAYMENT_WINDOW): the deadline its run is started with. */
  paymentWindowMs: number;
  /** The placement's clock where it is not the database's (tests on the time-skipping server). */
  clock?: () => Promise<Date>;
}

export const placeOrder: ApiHandler<'placeOrder', PlaceOrderDeps> = async (
  { headers, body: { customerId: named, ...body }, caller },
  deps,
) => {
  const customerId = actingFor(caller, named);
  if (customerId === undefined) {
    throw new ApiError('VALIDATION_FAILED', undefined, {
      issues: [{ path: 'customerId', message: 'required when the admin token places the order' }],
    });
  }
  const idempotencyKey = headers['Idempotency-Key'];
  const orderId = newOrderId(deps.orderIdSecret, customerId, idempotencyKey);
  const request: PlaceOrderRequest = {
    orderId,
    customerId,
    ...body,
    idempotencyKey,
    requestHash: hashRequest({ customerId, ...body }),
  };

  // The workflow is started first and writes the order itself (update-with-start): there is no
  // moment when an order exists without the workflow that will cancel it. See docs/architecture.md.
  const start = new WithStartWorkflowOperation<typeof OrderLifecycle>(ORDER_WORKFLOW_TYPE, {
    workflowId: orderWorkflowId(orderId),
    taskQueue: deps.taskQueue,
    args: [orderLifecycleInput(orderId)],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: orderSummary(request),
    typedSearchAttributes: orderAttributesAtStart(new Date((await now(deps)).getTime() + deps.paymentWindowMs)),
    priority: deps.checkoutPriority.atStart,
  });
  const place = () =>
    callTemporal(() =>
      deps.temporal.workflow.executeUpdateWithStart(placeOrderUpdate, {
        args: [request],
        startWorkflowOperation: start,
      }),
    );
  // A customer's coupon codes are counted against guessing; orders without one, and operators, are not.
  const placed =
    body.couponCode !== undefined && caller.role === 'customer'
      ? await deps.couponAttempts(customerId, place)
      : await place();
  deps.metrics.ordersPlaced.inc();
  void deps.checkoutPriority.lower(orderWorkflowId(orderId)); // not awaited: the customer does not wait for it
  // PENDING: the provider could not create the payment yet; GET /orders/:id shows it once it has.
  const payment = placed.payment === 'PENDING' || caller.role === 'operator' ? null : placed.payment;
  return { ...placed, payment, workflowId: orderWorkflowId(orderId) };
};

function now(deps: Pick<PlaceOrderDeps, 'clock'>): Promise<Date> {
  return deps.clock ? deps.clock() : Promise.resolve(new Date());
}

export const listOrders: ApiHandler<'listOrders', { db: Db }> = async ({ query, caller }, { db }) => {
  // Without a customerId an operator lists everyone's orders; a customer, always only their own.
  const orders = await listOrderViews(db, { ...query, customerId: actingFor(caller, query.customerId) });
  return { orders: orders.map((order) => shownTo(caller, order)) };
};

export const getOrder: ApiHandler<'getOrder', { db: Db }> = async ({ params: { id }, caller }, { db }) => {
  const order = await findOrderView(db, id);
  if (!order || !mayReach(caller, order.customerId)) throw businessError('UNKNOWN_ORDER');
  return shownTo(caller, order);
};

/** What pays the order is the customer's: an operator sees everything else. */
function shownTo(caller: Caller, order: OrderView): OrderView {
  return caller.role === 'customer' ? order : { ...order, payment: null };
}

/**
 * The provider cannot say whether the customer paid, or the money on its way is not worth waiting
 * for: an operator cancels anyway (a payment still arriving is refunded).
 */
export const forceCancel: ApiHandler<'forceCancel', { db: Db; temporal: Client }> = async (
  { params: { id }, caller },
  deps,
) => whileUnpaid(deps, id, caller, (workflow) => workflow.executeUpdate(forceCancelUpdate), isOpen);

export const cancelOrder: ApiHandler<'cancelOrder', { db: Db; temporal: Client }> = async (
  { params: { id }, caller },
  deps,
) => {
  await whileUnpaid(deps, id, caller, (workflow) => workflow.signal(cancelSignal));
  return { id, cancelRequested: true };
};

/**
 * With an Idempotency-Key the update's id is derived from it, so an operator who sends the request
 * again after its answer was lost gets the same answer, and the minutes are added once: Temporal
 * keeps an update's outcome by its id, and the order applies an extension id once.
 */
export const extendDeadline: ApiHandler<'extendDeadline', { db: Db; temporal: Client }> = async (
  { params: { id }, headers, body: { minutes }, caller },
  deps,
) => {
  const key = headers['Idempotency-Key'];
  return whileUnpaid(deps, id, caller, (workflow) =>
    workflow.executeUpdate(extendDeadlineUpdate, {
      args: [{ minutes }],
      ...(key !== undefined && { updateId: extensionUpdateId(key, minutes) }),
    }),
  );
};

/**
 * Same body, same hash: items are compared as a set, whatever order the client listed them in. The
 * email counts only when given, so a body without one hashes as it did before emails existed.
 */
function hashRequest(body: Omit<CreateOrderBody, 'customerId'> & { customerId: string }): string {
  const items = [...body.items].sort((a, b) => a.sku.localeCompare(b.sku)).map((i) => [i.sku, i.quantity]);
  const email = body.email === undefined ? [] : [body.email];
  return createHash('sha256')
    .update(JSON.stringify([body.customerId, body.couponCode ?? null, items, ...email]))
    .digest('hex');
}
