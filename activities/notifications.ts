import type { ActivityDeps } from './deps.js';
import type { NotificationTemplate } from '../domain/statuses.js';

export function createNotificationActivities({ db, notifier }: ActivityDeps) {
  return {
    /**
     * One message per order and template (and `key`, for a template that can apply several times
     * to one order, such as one refund per payment), however often this runs.
     */
    async notifyCustomer(input: { orderId: string; template: NotificationTemplate; key?: string }): Promise<void> {
      const order = await db.order.findUniqueOrThrow({ where: { id: input.orderId }, select: { customerId: true } });
      await notifier.send({
        idempotencyKey: [input.orderId, input.template, ...(input.key ? [input.key] : [])].join(':'),
        customerId: order.customerId,
        orderId: input.orderId,
        template: input.template,
      });
    },
  };
}
