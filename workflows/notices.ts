import { log } from '@temporalio/workflow';
import type { NotificationTemplate } from '../domain/statuses.js';
import { messaging } from './activity-proxies.js';
import type { Attention } from './attention.js';
import { failureKind, rootCauseMessage } from './failures.js';
import type { KeepTrying } from './keep-trying.js';

/**
 * Tells the customer what happened (cancelled, refunded). A message the messaging provider still
 * refuses or fails after its retries does not hold the order up: it is flagged for an operator,
 * who can reach the customer. Our own database being down is no reason to give up.
 */
export async function notifyCustomer(
  notice: { orderId: string; template: NotificationTemplate; key?: string },
  keepTrying: KeepTrying,
  attention: Attention,
): Promise<void> {
  try {
    await keepTrying.mayGiveUp(messaging, 'notifyCustomer', notice);
  } catch (err) {
    if (failureKind(err) === undefined) throw err;
    const error = rootCauseMessage(err);
    log.error('customer notice not sent after its retries', { ...notice, error });
    attention.note(
      `notice:${notice.template}:${notice.key ?? ''}`,
      `the customer was not sent ${notice.template} (${error}): reach them another way`,
    );
  }
}
