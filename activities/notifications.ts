import { Prisma } from '@prisma/client';
import type { NotificationTemplate } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import type { ActivityDeps } from './deps.js';

export function createNotificationActivities({ db, notifier }: ActivityDeps) {
  return {
    /**
     * One message per order and template (and `key`, for a template that can apply several times
     * to one order, such as one refund per payment), however often this runs.
     */
    async notifyCustomer(input: { orderId: string; template: NotificationTemplate; key?: string }): Promise<void> {
      const { rows } = await query<{ customer_id: string }>(
        db.pool,
        Prisma.sql`SELECT customer_id FROM orders WHERE id = ${input.orderId}::uuid`,
      );
      if (!rows[0]) throw new Error(`notifyCustomer: no order ${input.orderId}`);
      await notifier.send({
        idempotencyKey: [input.orderId, input.template, ...(input.key ? [input.key] : [])].join(':'),
        customerId: rows[0].customer_id,
        orderId: input.orderId,
        template: input.template,
      });
    },
  };
}
