import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CancelReason, FulfillmentStep, OrderStatus, PaymentStatus, StepStatus } from './statuses.js';

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
/** Holds a refund that failed after the provider accepted it (workflows/failed-refund.ts). */
export const FAILED_REFUND_WORKFLOW_TYPE = 'SettleFailedRefund';
/** SettleFailedRefund's id: one per payment, so the failures of its refunds reach one open run. */
export const failedRefundWorkflowId = (paymentId: string): string => `failed-refund-${paymentId}`;

export interface OrderLine {
  sku: string;
  quantity: number;
}

export interface PlaceOrderRequest {
  orderId: string;
  customerId: string;
  items: OrderLine[];
  couponCode?: string | undefined;
  /** Where the order's customer emails go; absent: none are sent. */
  email?: string | undefined;
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
  /**
   * The payment at a provider that cancels payments, created with the order; `PENDING`: the
   * provider could not create it yet and the order's run keeps trying; null: a callback-only
   * provider, which has nothing to create.
   */
  payment: OrderPayment | 'PENDING' | null;
}

/**
 * The order as its run takes it from placeOrder and loadOrder: with its payment reminder while
 * reminders are on (PAYMENT_REMINDER_BEFORE, a setting of the worker that reaches the run in these
 * answers, so a replay reads the lead the run acted on). The run never hands `reminder` to a caller.
 */
export type OrderForRun = PlacedOrder & { reminder?: PaymentReminder };

/** The order as its caller sees it: the reminder is the run's own. */
export function placedOrderOf({ reminder: _reminder, ...order }: OrderForRun): PlacedOrder {
  return order;
}

/** When the run reminds the customer of the unpaid order: `beforeMs` before its deadline, once (`sent`: done already). */
export interface PaymentReminder {
  beforeMs: number;
  sent: boolean;
}

/** What the customer's client needs to pay the order at the provider: shown to that customer only. */
export interface OrderPayment {
  /** The provider's id of the payment (Stripe: the PaymentIntent's). */
  paymentId: string;
  clientSecret: string;
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

/**
 * Names a payment the webhook recorded after verifying it: its `payments` row (RECEIVED, with the
 * signed amount and the arrival time by the database clock) is all that settlement reads. Nothing
 * else travels, so a `paid` signal sent straight to Temporal can only point at a verified payment;
 * one that names no row for its order changes nothing.
 */
export interface PaymentNotice {
  paymentId: string;
  orderId: string;
}

/**
 * A refund the provider accepted and then failed (Stripe's `refund.failed`: the card issuer turned
 * it down). `refundRef` names the refund: only the one the database recorded for the payment can
 * be failed by it, so a redelivery, or the event of an older attempt, changes nothing.
 */
export interface RefundFailure {
  orderId: string;
  paymentId: string;
  refundRef: string;
  reason: string;
}

/**
 * Task priorities of an order's workflow (Temporal: 1 goes first, 3 is the default of 1-5). A new
 * order starts at `checkout`, so its placement is served before a backlog of other orders' work (a
 * storm of expiries); once placed it drops to `placed` and queues like any other (api/checkout-priority.ts).
 */
export const ORDER_PRIORITY = { checkout: 1, placed: 3 } as const;

export interface OrderLifecycleInput {
  orderId: string;
  /**
   * Set by the reconciliation sweep for an order whose workflow is gone: the run reads the order
   * from the database instead of waiting for the placeOrder update.
   */
  adopt?: boolean;
  /**
   * Set by a run that continued as new (workflows/order-run.ts): the order itself is read again
   * from the database (`adopt` is set too); this is what the database does not hold.
   */
  continued?: ContinuedRun;
}

/** What a run that continues as new hands to the next: what it was waiting on, and since when. */
export interface ContinuedRun {
  /** It was closing the payment at the provider: why (the customer's cancel, or the deadline), and since when (ms). */
  closing?: { reason: CancelReason; since: number };
  /** The order was cancelled and its customer told; the run was still closing its payment at the provider, since when (ms). */
  closingAfterCancel?: { since: number };
}

/** The input of a new OrderLifecycle run. */
export function orderLifecycleInput(orderId: string, options: { adopt?: boolean } = {}): OrderLifecycleInput {
  return { orderId, ...options };
}

/** The steps of the business process an order's run goes through, in order (workflows/order-lifecycle.ts). */
export const LIFECYCLE_PHASES = [
  'placing',
  'awaiting-payment',
  'closing-payment',
  'awaiting-funds',
  'compensating',
  'fulfilling',
  'ending',
] as const;
export type LifecyclePhase = (typeof LIFECYCLE_PHASES)[number];

export interface LifecycleStatus {
  orderId: string;
  status: OrderStatus | 'PLACING' | 'REJECTED';
  expiresAt: string | null;
  cancelReason: CancelReason | null;
  phase: LifecyclePhase;
  /** What the run waits for now, in words an operator understands. */
  waitingFor: string;
  payments: Array<{ paymentId: string; status: PaymentStatus }>;
  /** Null until the order is paid. */
  fulfillment: Record<FulfillmentStep, StepStatus> | null;
  /** What an operator must do for this order (NeedsAttention), in words; empty when nothing. */
  needsAttention: string[];
  /** What the run waits on out of the ordinary (WaitingFor), since when, and the last answer; empty when nothing. */
  waits: string[];
}

/**
 * How an order's run ended: its result. The history keeps it, so it carries only what the end came
 * to, and leaves out what is empty but what an operator must still do: the deadline and the rest
 * are the database's, and the `status` query answers them while the run is there to ask.
 */
export interface OrderOutcome {
  status: LifecycleStatus['status'];
  cancelReason?: CancelReason;
  /** The payments the run settled. */
  payments?: LifecycleStatus['payments'];
  /** A paid order's fulfillment steps. */
  fulfillment?: Record<FulfillmentStep, StepStatus>;
  /** What an operator must still do for this order, in words; empty (said so) when nothing. */
  needsAttention: string[];
}

/** The API creates the order through the workflow (update-with-start), see docs/architecture.md, "Placing an order". */
export const placeOrderUpdate = defineUpdate<PlacedOrder, [PlaceOrderRequest]>('placeOrder');
export const paidSignal = defineSignal<[PaymentNotice]>('paid');
/**
 * The provider says the order's payment failed (a debit that bounced): the run asks the provider
 * at once instead of at its next recheck. It carries nothing to trust: the provider's answer decides.
 */
export const paymentFailedSignal = defineSignal<[PaymentNotice]>('paymentFailed');
/** A refund failed after the provider accepted it: to SettleFailedRefund, with signal-with-start. */
export const refundFailedSignal = defineSignal<[RefundFailure]>('refundFailed');
/** The customer gives up an unpaid order; it takes the same guarded path as the timeout. */
export const cancelSignal = defineSignal('cancel');
/**
 * An operator cancels an order whose payment the provider cannot close now (it is down): without the
 * provider's word, so a payment that still arrives is refunded. Refused unless the run is closing.
 */
export const forceCancelUpdate = defineUpdate<{ orderId: string; status: OrderStatus }>('forceCancel');
export const extendDeadlineUpdate = defineUpdate<{ expiresAt: string }, [{ minutes: number }]>('extendDeadline');
/**
 * The id of an extension an operator sent with an Idempotency-Key: the same key and minutes are the
 * same extension, applied once; other minutes under the same key are another.
 */
export const extensionUpdateId = (idempotencyKey: string, minutes: number): string =>
  `extend-${minutes}-${idempotencyKey}`;
export const statusQuery = defineQuery<LifecycleStatus>('status');
/** An operator re-drives a refund the provider rejected (REFUND_FAILED), in whichever run holds it. */
export const retryRefundUpdate = defineUpdate<{ paymentId: string; status: PaymentStatus }, [{ paymentId: string }]>(
  'retryRefund',
);
/** An operator re-drives a FAILED fulfillment step once its cause is fixed. */
export const retryFulfillmentStepUpdate = defineUpdate<
  { step: FulfillmentStep; status: StepStatus },
  [{ step: FulfillmentStep }]
>('retryFulfillmentStep');

export const RECONCILIATION_WORKFLOW_TYPE = 'ReconcileStrandedOrders';
export const RECONCILIATION_SCHEDULE_ID = 'reconcile-stranded-orders';

export const PROVIDER_SWEEP_WORKFLOW_TYPE = 'SweepProviderEvents';
export const PROVIDER_SWEEP_SCHEDULE_ID = 'sweep-provider-events';

/** What the provider sweep's schedule hands each sweep. */
export interface ProviderSweepInput {
  /** The task queue the payments it hands over are settled on. */
  taskQueue: string;
}

export interface ReconciliationInput {
  /**
   * How long an order may wait for its run before the sweep looks at it: an UNPAID order past its
   * deadline, a PAID one whose fulfillment has not finished since it was paid.
   */
  graceMs: number;
  /** Orders examined per sweep, oldest first; the next sweep goes on after the last one examined. */
  limit: number;
  /**
   * Unsettled payments handed over per sweep, oldest first, the same way; each is one or two calls
   * to Temporal. A schedule written before this field existed passes none: PAYMENT_SWEEP_LIMIT
   * (activities/reconciliation.ts).
   */
  paymentLimit?: number;
  /**
   * How long a sweep examines before it leaves the rest to the next one, which goes on from where it
   * stopped. None: half the sweep activity's start-to-close timeout (activities/reconciliation.ts).
   */
  timeBudgetMs?: number;
  taskQueue: string;
}

/** Where a sweep stopped among the orders: the time it orders by (deadline or payment) and the order's id. */
export interface SweepPosition {
  since: string;
  orderId: string;
}

/** Where a sweep stopped among the unsettled payments: the arrival time it orders by and the payment's id. */
export interface PaymentSweepPosition {
  receivedAt: string;
  paymentId: string;
}
