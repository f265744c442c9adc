import type Stripe from 'stripe';

/** Marks the refunds this service made (an operator's refund in Stripe's dashboard has none). */
export const REFUND_KEY = 'order_lifecycle_refund_key';

/** A refund's statuses that mean the money did not go back (its others: pending, requires_action, succeeded). */
export const REFUND_NOT_GIVEN: ReadonlySet<Stripe.Refund['status']> = new Set(['failed', 'canceled']);

export interface OwnRefunds {
  /** A refund this service made for the payment that has not failed: the payment is being or was given back. */
  live: Stripe.Refund | undefined;
  /**
   * For a new refund: one key per failed attempt, so a retry after a failure is a new refund; with
   * `retry`, a key of its own for a request that goes on after Stripe's server error.
   */
  key(retry?: string): { idempotencyKey: string; metadata: Record<string, string> };
}

/** What the payment's refunds (as Stripe lists them) say about refunding it once more. */
export function findOwnRefund(refunds: readonly Stripe.Refund[], paymentId: string): OwnRefunds {
  const prefix = `refund-${paymentId}-`;
  const own = refunds.filter((r) => r.metadata?.[REFUND_KEY]?.startsWith(prefix));
  return {
    live: own.find((r) => !REFUND_NOT_GIVEN.has(r.status)),
    key(retry) {
      // Still under the prefix: a refund made with it is counted as this service's own.
      const idempotencyKey = `${prefix}${own.length}${retry === undefined ? '' : `-${retry}`}`;
      return { idempotencyKey, metadata: { [REFUND_KEY]: idempotencyKey } };
    },
  };
}
