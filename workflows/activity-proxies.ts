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
 * an expired order is cancelled, compensated and finished in one task instead of four, and a paid
 * one is recorded and fulfilled in one (each task recording local activities is one Temporal
 * action; each activity is one more). The sweeps stay regular activities: they page through
 * Temporal or the provider for up to a minute, and are started by a schedule, not by an order.
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
  proxyLocalActivities<Pick<Activities, 'issueInvoice' | 'sendPaymentNotification' | 'awardLoyaltyPoints'>>(
    fulfillmentOptions,
  );

export const sweep = proxyActivities<Pick<Activities, 'sweepStrandedOrders'>>(sweepOptions);

export const providerSweep = proxyActivities<Pick<Activities, 'sweepProviderEvents'>>(providerSweepOptions);
