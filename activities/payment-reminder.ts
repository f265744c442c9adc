import { log } from '@temporalio/activity';
import { recordPaymentReminder, type PaymentReminderOutcome } from '../store/payment-reminder.js';
import { asOf, type ActivityDeps } from './deps.js';

export function createPaymentReminderActivities(deps: ActivityDeps) {
  return {
    /**
     * Reminds the customer of the unpaid order before its deadline `expiresAt`, by writing its
     * `order.payment_reminder` event (the email goes out from the event). Guarded: an order paid,
     * cancelled, closing, given another deadline or reminded already meanwhile is not reminded, and
     * an attempt run again writes nothing twice.
     */
    async remindOfPayment(input: { orderId: string; expiresAt: string }): Promise<PaymentReminderOutcome> {
      const answer = await recordPaymentReminder(deps.db.pool, input, await asOf(deps));
      if (answer.outcome === 'REMINDED') log.info('customer reminded of the unpaid order', input);
      return answer;
    },
  };
}
