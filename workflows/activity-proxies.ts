import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import {
  callerWaitingOptions,
  databaseOptions,
  fulfillmentOptions,
  moneyOptions,
  noticeOptions,
  providerSweepOptions,
  sweepOptions,
} from './activity-options.js';

/**
 * The activities workflow code may call, each bundle typed with exactly the activities it holds,
 * so a call through the wrong preset does not compile.
 *
 * The calls that follow a decision run as local activities, inside the workflow task that decided:
 * an expired order is cancelled, compensated and finished in one task instead of four. Fulfillment
 * and the sweep stay regular activities: they call slow third parties (or Temporal) and retry for
 * minutes, which belongs on the task queue, visible as pending activities in the Web UI.
 */
export const callerWaiting =
  proxyLocalActivities<Pick<Activities, 'placeOrder' | 'extendDeadline'>>(callerWaitingOptions);

export const database =
  proxyLocalActivities<
    Pick<
      Activities,
      | 'loadOrder'
      | 'remindOfPayment'
      | 'cancelOrder'
      | 'settlePayment'
      | 'recordRefundFailure'
      | 'recordRefundFailedLater'
      | 'reopenRefund'
      | 'markStepFailed'
      | 'loadFulfillment'
      | 'reopenStep'
    >
  >(databaseOptions);

export const money =
  proxyLocalActivities<Pick<Activities, 'refundPayment' | 'createPayment' | 'closePayment' | 'closeCancelledPayment'>>(
    moneyOptions,
  );

export const messaging = proxyLocalActivities<Pick<Activities, 'notifyCustomer'>>(noticeOptions);

export const fulfillment =
  proxyActivities<Pick<Activities, 'issueInvoice' | 'sendPaymentNotification' | 'awardLoyaltyPoints'>>(
    fulfillmentOptions,
  );

export const sweep = proxyActivities<Pick<Activities, 'sweepStrandedOrders'>>(sweepOptions);

export const providerSweep = proxyActivities<Pick<Activities, 'sweepProviderEvents'>>(providerSweepOptions);
