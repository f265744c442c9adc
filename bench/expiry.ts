import type { DirectActivities } from './direct-placement.js';

/**
 * What the winner of an order's guarded cancel owes afterwards when the cancel could not tell the
 * customer itself, exactly as the workflow's compensation runs it with a callback-only provider,
 * the bench's (workflows/order-lifecycle.ts, `compensate`): the customer's notice, with the same
 * activity. Every peer of the bench calls this one function, so when the product's compensation
 * changes, the peers change with it here. Failures are not counted: faults are off in the bench,
 * and a missing notice shows as an order that never settles.
 */
export async function compensateExpired(direct: DirectActivities, orderId: string): Promise<void> {
  await direct.run(direct.activities.notifyCustomer, { orderId, template: 'ORDER_CANCELLED' }).catch(() => undefined);
}

/** What one expiry did: it won and compensated, compensated again, found the order settled, or early. */
export type ExpiryOutcome =
  | { outcome: 'cancelled' }
  /** Already cancelled: a retry after a crash between the cancel and its notice (the notice's key makes it once). */
  | { outcome: 'compensated-again' }
  | { outcome: 'settled' }
  /** The order's deadline lies ahead (a claim a little early): the caller puts it back for `expiresAtMs`. */
  | { outcome: 'not-due'; expiresAtMs: number };

/**
 * An expiry as a queue-driven peer runs it (one message or job per order, at least once): the
 * service's guarded cancel (which tells the customer as it wins), then what the winner still owes.
 * A redelivered expiry whose order is already CANCELLED compensates again, since it cannot tell
 * whether the first run finished it; in the bench only the deadline cancels, so a cancelled order
 * there is always an expired one.
 */
export async function expireOrder(direct: DirectActivities, orderId: string): Promise<ExpiryOutcome> {
  const result = await direct.run(direct.activities.cancelOrder, { orderId, reason: 'PAYMENT_TIMEOUT' });
  switch (result.outcome) {
    case 'CANCELLED':
      if (!result.customerTold) await compensateExpired(direct, orderId);
      return { outcome: 'cancelled' };
    case 'NOT_DUE':
      return { outcome: 'not-due', expiresAtMs: Date.parse(result.expiresAt) };
    case 'PAYMENT_RECEIVED': // a payment that came in time is being settled: it pays the order
      return { outcome: 'settled' };
    case 'ALREADY_FINAL':
      if (result.status !== 'CANCELLED') return { outcome: 'settled' };
      await compensateExpired(direct, orderId);
      return { outcome: 'compensated-again' };
  }
}
