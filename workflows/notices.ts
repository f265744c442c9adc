import { log, patched } from '@temporalio/workflow';
import type { NotificationTemplate } from '../domain/statuses.js';
import type { Attention } from './attention.js';
import { isActivityFailure, rootCauseMessage } from './failures.js';
import type { MustSucceed } from './must-succeed.js';
import { SETTLE_EVERY_PAYMENT_PATCH } from './patches.js';
import type { Steps } from './steps.js';

/**
 * Tells the customer what happened (cancelled, refunded). A message the messaging provider still
 * fails after its retries does not hold the order up: it is flagged for an operator, who can reach
 * the customer. (Our own database being down is no reason to give up: MustSucceed goes on.)
 */
export async function notifyCustomer(
  input: { orderId: string; template: NotificationTemplate; key?: string },
  { messaging }: Steps,
  mustSucceed: MustSucceed,
  attention: Attention,
): Promise<void> {
  try {
    await mustSucceed.run('notifyCustomer', () => messaging.notifyCustomer(input));
  } catch (err) {
    if (!isActivityFailure(err) || !patched(SETTLE_EVERY_PAYMENT_PATCH)) throw err;
    const error = rootCauseMessage(err);
    log.error('customer notice not sent after its retries', { ...input, error });
    attention.note(
      `notice:${input.template}:${input.key ?? ''}`,
      `the customer was not sent ${input.template} (${error}): reach them another way`,
    );
  }
}
