import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { databaseOptions, thirdPartyOptions } from './activity-options.js';
import type { PaymentNotice } from './messages.js';
import { NOTIFY_REFUNDS_PATCH } from './patches.js';

const database = proxyActivities<Activities>(databaseOptions);
const thirdParty = proxyActivities<Activities>(thirdPartyOptions);

/**
 * A payment whose order's lifecycle has already ended (cancelled and compensated, or paid by
 * another payment). The same settlement decides; for a finished order it always means a refund.
 * Started by the webhook with id `late-payment-<paymentId>`, so a redelivery starts nothing new.
 */
export async function SettleLatePayment(notice: PaymentNotice): Promise<{ outcome: 'PAID' | 'REFUNDED' }> {
  const settled = await database.settlePayment(notice);
  if (settled.outcome === 'PAID') return { outcome: 'PAID' };
  await thirdParty.refundPayment(notice.paymentId);
  if (patched(NOTIFY_REFUNDS_PATCH)) {
    await thirdParty.notifyCustomer({ orderId: notice.orderId, template: 'PAYMENT_REFUNDED', key: notice.paymentId });
  }
  return { outcome: 'REFUNDED' };
}
