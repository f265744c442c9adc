/**
 * Every status an order or a payment can have, and the one transition table that says which
 * moves are legal. The guarded SQL updates derive their `WHERE status = ANY(...)` from here, so a
 * move that is not in the table can never be applied, whatever order events arrive in.
 * Mirrored by the enums in prisma/schema.prisma (test/workflows/order-status.test.ts checks).
 */
export const ORDER_STATUSES = ['UNPAID', 'PAID', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const PAYMENT_STATUSES = ['CAPTURED', 'REFUND_PENDING', 'REFUNDED'] as const;
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

/** A payment is recorded as CAPTURED or REFUND_PENDING when it arrives; only the refund moves it on. */
export const PAYMENT_TRANSITIONS = {
  refund: { from: ['REFUND_PENDING'], to: 'REFUNDED' },
} as const satisfies Record<string, Transition<PaymentStatus>>;
export type PaymentTransition = keyof typeof PAYMENT_TRANSITIONS;

export function canTransition<S extends string>(t: Transition<S>, from: S): boolean {
  return t.from.includes(from);
}

export function isFinal(status: OrderStatus): boolean {
  return !Object.values(ORDER_TRANSITIONS).some((t) => canTransition<OrderStatus>(t, status));
}
