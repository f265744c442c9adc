import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CancelReason, FulfillmentStepName, OrderStatus, PaymentStatus, StepStatus } from './statuses.js';

/**
 * The names and payloads shared by the workflow, the worker and the API: a client and the
 * workflow can only talk through these, so both sides are type-checked against one definition.
 */
export const ORDER_WORKFLOW_TYPE = 'OrderLifecycle';
/** Settles a payment that arrived after its order's lifecycle ended (workflows/late-payment.ts). */
export const LATE_PAYMENT_WORKFLOW_TYPE = 'SettleLatePayment';
export const orderWorkflowId = (orderId: string): string => `order-${orderId}`;
/** The order an `order-<orderId>` workflow id names, or undefined for any other workflow. */
export const orderIdOfWorkflow = (workflowId: string): string | undefined => /^order-(.+)$/.exec(workflowId)?.[1];
/** Every log line about an order names it twice: orderId for people and the database, workflowId for the Web UI. */
export const orderLogFields = (orderId: string): { orderId: string; workflowId: string } => ({
  orderId,
  workflowId: orderWorkflowId(orderId),
});
/** SettleLatePayment's id: one per payment, so a redelivered callback starts nothing new. */
export const latePaymentWorkflowId = (paymentId: string): string => `late-payment-${paymentId}`;

export interface OrderLine {
  sku: string;
  quantity: number;
}

export interface PlaceOrderRequest {
  orderId: string;
  customerId: string;
  items: OrderLine[];
  couponCode?: string | undefined;
  idempotencyKey?: string | undefined;
  /** Hash of the client's request body: tells a replay from a reused Idempotency-Key. */
  requestHash: string;
}

export interface PlacedOrder {
  id: string;
  customerId: string;
  status: OrderStatus;
  totalCents: number;
  /** ISO-8601; set from the database clock when the order was written. */
  expiresAt: string;
  couponCode: string | null;
  items: Array<OrderLine & { unitPriceCents: number }>;
}

/**
 * The workflow's static summary in the Temporal Web UI, set by the API when it starts the workflow.
 * The total is decided by the placement transaction, after the start: the current details show it.
 */
export function orderSummary(
  request: Pick<PlaceOrderRequest, 'orderId' | 'customerId' | 'items' | 'couponCode'>,
): string {
  const items = request.items.map((i) => `${i.quantity} × ${i.sku}`).join(', ');
  return `Order ${request.orderId} for ${request.customerId}: ${items}${request.couponCode ? ` (coupon ${request.couponCode})` : ''}`;
}

/** What the payment provider told us, as the webhook verified it. */
export interface PaymentNotice {
  paymentId: string;
  orderId: string;
  amountCents: number;
  /** ISO-8601, as the provider reports it. */
  paidAt: string;
  /**
   * ISO-8601: when our webhook accepted the callback, by the database clock. The deadline is judged
   * at arrival, not when a busy worker gets round to settling. Absent in notices from before it existed.
   */
  receivedAt?: string;
}

/**
 * Task priorities of an order's workflow (Temporal: 1 goes first, 3 is the default of 1-5). A new
 * order starts at `checkout`, so its placement is served before a backlog of other orders' work (a
 * storm of expiries); once placed it drops to `placed` and queues like any other (api/checkout-priority.ts).
 */
export const ORDER_PRIORITY = { checkout: 1, placed: 3 } as const;

/**
 * The shapes of an OrderLifecycle run, oldest first; each keeps what the one before it introduced.
 * A run keeps the shape it was started with (its input), so runs in flight replay their own while
 * new ones take the newest. Chosen by the input rather than by patched(), which would cost every
 * order a marker and a search-attribute event. Runs from before the first entry have no shape.
 * - `lean`: placement inside the first workflow task, no placement timer, stock and coupon given
 *   back by the guarded cancel itself, NeedsAttention written only when it changes;
 * - `local-steps`: the steps that follow a decision run as local activities, inside the workflow
 *   task that decided (workflows/steps.ts).
 */
export const ORDER_SHAPES = ['lean', 'local-steps'] as const;
export type OrderShape = (typeof ORDER_SHAPES)[number];
/** The shape every OrderLifecycle started now takes. */
export const ORDER_SHAPE: OrderShape = 'local-steps';

/**
 * Whether a run of `shape` has what `since` introduced. A shape this code does not know comes from
 * a newer API than this worker: read as an older shape, the run would later fail to replay on the
 * newer worker. It is thrown instead, as a plain Error, which in workflow code fails the workflow
 * task, not the run: Temporal retries the task until a worker that knows the shape takes it.
 */
export function hasShape(shape: OrderShape | undefined, since: OrderShape): boolean {
  if (shape === undefined) return false;
  if (!ORDER_SHAPES.includes(shape))
    throw new Error(`unknown OrderLifecycle shape "${shape}": this worker is older than the API that started the run`);
  return ORDER_SHAPES.indexOf(shape) >= ORDER_SHAPES.indexOf(since);
}

export interface OrderLifecycleInput {
  orderId: string;
  /**
   * Set by the reconciliation sweep for an order whose workflow is gone: the run reads the order
   * from the database instead of waiting for the placeOrder update.
   */
  adopt?: boolean;
  /** ORDER_SHAPE when the run was started (orderLifecycleInput); absent in runs from before shapes. */
  shape?: OrderShape;
}

/** The input of a new OrderLifecycle run. */
export function orderLifecycleInput(orderId: string, options: { adopt?: boolean } = {}): OrderLifecycleInput {
  return { orderId, ...options, shape: ORDER_SHAPE };
}

export interface LifecycleStatus {
  orderId: string;
  status: OrderStatus | 'PLACING' | 'REJECTED';
  expiresAt: string | null;
  cancelReason: CancelReason | null;
  /** What the workflow is doing now, in words an operator understands. */
  waitingFor: string;
  payments: Array<{ paymentId: string; status: PaymentStatus }>;
  /** Null until the order is paid. */
  fulfillment: Record<FulfillmentStepName, StepStatus> | null;
  /** What an operator must do for this order (NeedsAttention), in words; empty when nothing. */
  needsAttention: string[];
}

/** The API creates the order through the workflow (update-with-start), see docs/architecture.md, "Placing an order". */
export const placeOrderUpdate = defineUpdate<PlacedOrder, [PlaceOrderRequest]>('placeOrder');
export const paidSignal = defineSignal<[PaymentNotice]>('paid');
/** The customer gives up an unpaid order; it takes the same guarded path as the timeout. */
export const cancelSignal = defineSignal('cancel');
export const extendDeadlineUpdate = defineUpdate<{ expiresAt: string }, [{ minutes: number }]>('extendDeadline');
export const statusQuery = defineQuery<LifecycleStatus>('status');
/** An operator re-drives a refund the provider rejected (REFUND_FAILED), in whichever run holds it. */
export const retryRefundUpdate = defineUpdate<{ paymentId: string; status: PaymentStatus }, [{ paymentId: string }]>(
  'retryRefund',
);
/** An operator re-drives a FAILED fulfillment step once its cause is fixed. */
export const retryFulfillmentStepUpdate = defineUpdate<
  { step: FulfillmentStepName; status: StepStatus },
  [{ step: FulfillmentStepName }]
>('retryFulfillmentStep');

export const RECONCILIATION_WORKFLOW_TYPE = 'ReconcileStrandedOrders';
export const RECONCILIATION_SCHEDULE_ID = 'reconcile-stranded-orders';

export interface ReconciliationInput {
  /** How long past its deadline an UNPAID order may be before the sweep looks at it. */
  graceMs: number;
  /** Orders examined per sweep, oldest deadline first; the next sweep takes the rest. */
  limit: number;
  taskQueue: string;
}
