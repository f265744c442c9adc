/**
 * Every status an order, a payment, a coupon or a fulfillment step can have, and for each the one
 * transition table that says which moves are legal. Every status write takes its `SET status` and
 * its `WHERE status = ANY(...)` from here (store/guarded-sql.ts), so a move that is not in a
 * table can never be applied, whatever order events arrive in.
 * Mirrored by the enums in prisma/schema.prisma (test/domain/statuses.unit.test.ts checks).
 */
export const ORDER_STATUSES = ['UNPAID', 'AWAITING_FUNDS', 'PAID', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const PAYMENT_STATUSES = ['RECEIVED', 'CAPTURED', 'REFUND_PENDING', 'REFUNDED', 'REFUND_FAILED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** PAYMENT_FAILED: the payment under way at the deadline failed (a debit that bounced). */
export const CANCEL_REASONS = ['PAYMENT_TIMEOUT', 'CUSTOMER', 'PAYMENT_FAILED'] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];

/**
 * Why a payment is given back instead of paying for its order. The last four are the order's own
 * money refused (store/received-payments.ts): another currency, the other mode of the provider's
 * key (live or test), a Connect account not ours, or a payment that is not the order's own.
 */
export const REFUND_REASONS = [
  'ORDER_NOT_PAYABLE',
  'AMOUNT_MISMATCH',
  'ALREADY_PAID',
  'WRONG_CURRENCY',
  'WRONG_MODE',
  'FOREIGN_ACCOUNT',
  'NOT_THE_ORDERS_PAYMENT',
] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export interface Transition<S extends string> {
  readonly from: readonly S[];
  readonly to: S;
}

/** What a new row starts as. */
export const INITIAL_STATUS = {
  order: 'UNPAID',
  payment: 'RECEIVED',
  coupon: 'AVAILABLE',
  step: 'PENDING',
  unclaimed: 'HELD',
} as const;

/**
 * The statuses of an order that is still unpaid: it may yet be paid, cancelled or given more time.
 * The API's check before it calls the workflow asks this, and every guarded statement takes its
 * `WHERE` from it through the transitions below; the guarded statement decides a race.
 */
const STILL_UNPAID = ['UNPAID'] as const satisfies readonly OrderStatus[];

/**
 * The statuses of an order still open: unpaid, or AWAITING_FUNDS — past its deadline, its payment on
 * its way (a bank debit processing, a voucher or a bank transfer not yet paid). Both keep the stock
 * and coupon, and either may still be paid or cancelled; only an unpaid order may be offered for
 * payment or given more time. In AWAITING_FUNDS only the payment itself decides: its money pays the
 * order, its failure (or the policy's maximum) cancels it.
 */
const OPEN = ['UNPAID', 'AWAITING_FUNDS'] as const satisfies readonly OrderStatus[];

/** `undefined`: no order (yet), which is not unpaid either. */
export function isUnpaid(status: OrderStatus | undefined): boolean {
  return (STILL_UNPAID as readonly (OrderStatus | undefined)[]).includes(status);
}

/** Unpaid or awaiting funds: the order may still be paid or cancelled. */
export function isOpen(status: OrderStatus | undefined): boolean {
  return (OPEN as readonly (OrderStatus | undefined)[]).includes(status);
}

export const ORDER_TRANSITIONS = {
  pay: { from: OPEN, to: 'PAID' },
  cancel: { from: OPEN, to: 'CANCELLED' },
  awaitFunds: { from: STILL_UNPAID, to: 'AWAITING_FUNDS' },
  /** An admin moves the deadline: only while the order is unpaid. */
  extend: { from: STILL_UNPAID, to: 'UNPAID' },
} as const satisfies Record<string, Transition<OrderStatus>>;
export type OrderTransition = keyof typeof ORDER_TRANSITIONS;

/**
 * A payment is RECEIVED when the webhook records it, verified; settlement then moves it, once, to
 * CAPTURED (it paid its order) or REFUND_PENDING (it is owed back). Only the refund moves a REFUND_PENDING payment on, so a refund can never
 * overtake the payment it gives back, and a payment notice that arrives after its refund (a
 * redelivery) finds REFUNDED and changes nothing. A refund the provider rejects
 * for good is REFUND_FAILED: still owed, visible, and back to REFUND_PENDING only when an operator
 * retries it. So is a refund that fails after the provider accepted it (REFUNDED, then the card
 * issuer turned it down): the money did not go back.
 */
export const PAYMENT_TRANSITIONS = {
  capture: { from: ['RECEIVED'], to: 'CAPTURED' },
  oweBack: { from: ['RECEIVED'], to: 'REFUND_PENDING' },
  refund: { from: ['REFUND_PENDING'], to: 'REFUNDED' },
  failRefund: { from: ['REFUND_PENDING'], to: 'REFUND_FAILED' },
  refundFailedLater: { from: ['REFUNDED'], to: 'REFUND_FAILED' },
  retryRefund: { from: ['REFUND_FAILED'], to: 'REFUND_PENDING' },
} as const satisfies Record<string, Transition<PaymentStatus>>;
export type PaymentTransition = keyof typeof PAYMENT_TRANSITIONS;

/**
 * Money the provider took for no order of ours (an unclaimed payment): HELD for a grace
 * (UNCLAIMED_REFUND_GRACE) in which an operator may look, then refunded; a refund the provider
 * rejects leaves it REFUND_FAILED, listed for an operator.
 */
export const UNCLAIMED_STATUSES = ['HELD', 'REFUNDED', 'REFUND_FAILED'] as const;
export type UnclaimedStatus = (typeof UNCLAIMED_STATUSES)[number];

export const UNCLAIMED_TRANSITIONS = {
  refund: { from: ['HELD'], to: 'REFUNDED' },
  failRefund: { from: ['HELD'], to: 'REFUND_FAILED' },
} as const satisfies Record<string, Transition<UnclaimedStatus>>;

export const COUPON_STATUSES = ['AVAILABLE', 'LOCKED', 'REDEEMED'] as const;
export type CouponStatus = (typeof COUPON_STATUSES)[number];

/** A coupon is single-use: locked by a placed order, redeemed when it is paid, released when it is cancelled. */
export const COUPON_TRANSITIONS = {
  lock: { from: ['AVAILABLE'], to: 'LOCKED' },
  redeem: { from: ['LOCKED'], to: 'REDEEMED' },
  release: { from: ['LOCKED'], to: 'AVAILABLE' },
} as const satisfies Record<string, Transition<CouponStatus>>;

/**
 * After payment, each of these runs as its own step, by this name in the API, the workflow and its
 * activities; only the database spells it otherwise (store/fulfillment-steps.ts).
 */
export const FULFILLMENT_STEPS = ['invoice', 'notification', 'loyalty'] as const;
export type FulfillmentStep = (typeof FULFILLMENT_STEPS)[number];

/**
 * The steps a webhook endpoint can take the role of: the shop's invoicing or loyalty system, to
 * which that step delivers the order's `order.paid` (docs/operations.md, "Webhooks").
 */
export const ENDPOINT_FULFILLMENT_STEPS = ['invoice', 'loyalty'] as const satisfies readonly FulfillmentStep[];
export type EndpointFulfillmentStep = (typeof ENDPOINT_FULFILLMENT_STEPS)[number];

export const STEP_STATUSES = ['PENDING', 'DONE', 'FAILED'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** FAILED is the dead letter: it stays until an operator retries the step. */
export const STEP_TRANSITIONS = {
  /** Another attempt of a step that is still owed (its attempt counter moves, its status does not). */
  attempt: { from: ['PENDING'], to: 'PENDING' },
  complete: { from: ['PENDING'], to: 'DONE' },
  fail: { from: ['PENDING'], to: 'FAILED' },
  retry: { from: ['FAILED'], to: 'PENDING' },
} as const satisfies Record<string, Transition<StepStatus>>;

/**
 * An order event on its way to one webhook endpoint: PENDING while the job queue tries it (each
 * failed attempt is recorded and leaves it PENDING), DELIVERED on a 2xx, DEAD after the last
 * attempt: the dead letter, until an operator redelivers it (also a DELIVERED one a consumer lost).
 */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'DEAD'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WEBHOOK_DELIVERY_TRANSITIONS = {
  attempt: { from: ['PENDING'], to: 'PENDING' },
  deliver: { from: ['PENDING'], to: 'DELIVERED' },
  kill: { from: ['PENDING'], to: 'DEAD' },
  redeliver: { from: ['DEAD', 'DELIVERED'], to: 'PENDING' },
} as const satisfies Record<string, Transition<WebhookDeliveryStatus>>;

export function canTransition<S extends string>(t: Transition<S>, from: S): boolean {
  return t.from.includes(from);
}

export function isFinal(status: OrderStatus): boolean {
  return !Object.values(ORDER_TRANSITIONS).some((t) => t.to !== status && canTransition<OrderStatus>(t, status));
}

/** The messages the customer receives, one per order and template (and key, e.g. per refunded payment). */
export const NOTIFICATION_TEMPLATES = ['ORDER_CANCELLED', 'PAYMENT_RECEIVED', 'PAYMENT_REFUNDED'] as const;
export type NotificationTemplate = (typeof NOTIFICATION_TEMPLATES)[number];
