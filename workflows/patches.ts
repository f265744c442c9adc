/**
 * Every patch() id, in one place. A patch lets a workflow change ship while workflows started
 * before it are still running: they replay without it, new ones take it. Once no workflow from
 * before the change can be running any more (the longest order lifecycle plus its fulfillment),
 * replace patched(X) with deprecatePatch(X), and later remove both.
 */

/** Since 0.1: the customer is notified of each refund (PAYMENT_REFUNDED). */
export const NOTIFY_REFUNDS_PATCH = 'notify-customer-of-refunds';

/**
 * Since 0.2: a step that fails for good no longer ends the run. A rejected refund is recorded
 * (REFUND_FAILED) and waits for an operator, a failed compensation or notice is flagged, and every
 * payment the run accepted is settled before it ends, on every path out (workflows/settlement.ts).
 */
export const SETTLE_EVERY_PAYMENT_PATCH = 'settle-every-payment-before-the-run-ends';
