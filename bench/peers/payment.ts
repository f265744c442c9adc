import type { PlacedOrder } from '../../domain/messages.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { recordReceivedPayment } from '../../store/received-payments.js';
import type { DirectActivities } from '../direct-placement.js';

/**
 * A peer's order paid the service's way, without the API: the webhook's record of the payment
 * (recordReceivedPayment), then the settlement activity that decides it in the database. True when
 * it paid the order (the caller then takes the order's deadline out of its peer).
 */
export async function payDirectly(direct: DirectActivities, order: PlacedOrder): Promise<boolean> {
  const paymentId = `bench-peer-pay-${order.id}`;
  await recordReceivedPayment(
    direct.db.pool,
    { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: new Date().toISOString() },
    null,
    FAKE_PAYMENT_ACCOUNT,
  );
  const decision = await direct.run(direct.activities.settlePayment, { paymentId, orderId: order.id });
  return decision.outcome === 'PAID';
}
