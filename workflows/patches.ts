/**
 * Every patch() id, in one place. A patch lets a workflow change ship while workflows started
 * before it are still running: they replay without it, new ones take it. Once no workflow from
 * before the change can be running any more (the longest order lifecycle plus its fulfilment),
 * replace patched(X) with deprecatePatch(X), and later remove both.
 */

/** Since 0.1: the customer is notified of each refund (PAYMENT_REFUNDED). */
export const NOTIFY_REFUNDS_PATCH = 'notify-customer-of-refunds';
