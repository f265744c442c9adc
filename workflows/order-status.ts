/**
 * Every status an order or a payment can have, and the one transition table that says which
 * moves are legal. The guarded SQL updates derive their `WHERE status = ANY(...)` from here, so a
 * move that is not in the table can never be applied, whatever order events arrive in.
 * Mirrored by the enums in prisma/schema.prisma (test/workflows/order-status.test.ts checks).
 */
export const ORDER_STATUSES = ['UNPAID', 'PAID', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const PAYMENT_STATUSES = ['CAPTURED', 'REFUND_PENDING', 'REFUNDED', 'REFUND_FAILED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const CANCEL_REASONS = ['PAYMENT_TIMEOUT', 'CUSTOMER'] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];

/** Why a payment is given back instead of paying for its order. */
export const REFUND_REASONS = ['ORDER_NOT_PAYABLE', 'AMOUNT_MISMATCH', 'ALREADY_PAID'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

interface Transition<S extends string> {
  readonly from: readonly S[];
  readonly to: S;
}

export const ORDER_TRANSITIONS = {
  pay: { from: ['UNPAID'], to: 'PAID' },
  cancel: { from: ['UNPAID'], to: 'CANCELLED' },
} as const satisfies Record<string, Transition<OrderStatus>>;
export type OrderTransition = keyof typeof ORDER_TRANSITIONS;

/**
 * A payment is recorded as CAPTURED or REFUND_PENDING when it arrives; only the refund moves it on.
 * So a refund can never overtake the payment it gives back, and a payment notice that arrives after
 * its refund (a redelivery) finds REFUNDED, a final state, and changes nothing. A refund the provider
 * rejects for good is REFUND_FAILED: still owed, visible, and back to REFUND_PENDING only when an
 * operator retries it.
 */
export const PAYMENT_TRANSITIONS = {
  refund: { from: ['REFUND_PENDING'], to: 'REFUNDED' },
  failRefund: { from: ['REFUND_PENDING'], to: 'REFUND_FAILED' },
  retryRefund: { from: ['REFUND_FAILED'], to: 'REFUND_PENDING' },
} as const satisfies Record<string, Transition<PaymentStatus>>;
export type PaymentTransition = keyof typeof PAYMENT_TRANSITIONS;

/** After payment, each of these runs as its own step; the API names them in lower case. */
export const FULFILLMENT_STEPS = { invoice: 'INVOICE', notification: 'NOTIFICATION', loyalty: 'LOYALTY' } as const;
export type FulfillmentStepName = keyof typeof FULFILLMENT_STEPS;
export type FulfillmentStep = (typeof FULFILLMENT_STEPS)[FulfillmentStepName];
export const FULFILLMENT_STEP_NAMES = Object.keys(FULFILLMENT_STEPS) as FulfillmentStepName[];

export const STEP_STATUSES = ['PENDING', 'DONE', 'FAILED'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** FAILED is the dead letter: it stays until an operator retries the step. */
export const STEP_TRANSITIONS = {
  complete: { from: ['PENDING'], to: 'DONE' },
  fail: { from: ['PENDING'], to: 'FAILED' },
  retry: { from: ['FAILED'], to: 'PENDING' },
} as const satisfies Record<string, Transition<StepStatus>>;

export function canTransition<S extends string>(t: Transition<S>, from: S): boolean {
  return t.from.includes(from);
}

export function isFinal(status: OrderStatus): boolean {
  return !Object.values(ORDER_TRANSITIONS).some((t) => canTransition<OrderStatus>(t, status));
}
