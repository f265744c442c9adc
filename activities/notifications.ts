import { Prisma } from '@prisma/client';
import type { NotificationTemplate } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import type { ActivityDeps } from './deps.js';
import type { Notifier } from '../adapters/ports/notifier.js';

/** A message to the customer; `key` tells apart several of one template for one order (one refund per payment). */
export interface Notice {
  orderId: string;
  template: NotificationTemplate;
  key?: string;
}

/** One message per order, template and key, however often this runs: the idempotency key says which. */
export async function sendNotice(notifier: Notifier, notice: Notice, customerId: string): Promise<void> {
  const { orderId, template, key } = notice;
  await notifier.send({
    idempotencyKey: [orderId, template, ...(key ? [key] : [])].join(':'),
    customerId,
    orderId,
    template,
    ...(key ? { key } : {}),
  });
}

export function createNotificationActivities({ db, notifier }: ActivityDeps) {
  return {
    /**
     * One message per order and template (and `key`, for a template that can apply several times
     * to one order, such as one refund per payment), however often this runs.
     */
    async notifyCustomer(input: Notice): Promise<void> {
      const { rows } = await query<{ customer_id: string }>(
        db.pool,
        Prisma.sql`SELECT customer_id FROM orders WHERE id = ${input.orderId}::uuid`,
      );
      if (!rows[0]) throw new Error(`notifyCustomer: no order ${input.orderId}`);
      await sendNotice(notifier, input, rows[0].customer_id);
    },
  };
}
