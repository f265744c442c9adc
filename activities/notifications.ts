import type { ActivityDeps } from './deps.js';
import type { NotificationTemplate } from './third-party/notifier.js';

export function createNotificationActivities({ db, notifier }: ActivityDeps) {
  return {
    /** One message per order and template, however often this runs. */
    async notifyCustomer(input: { orderId: string; template: NotificationTemplate }): Promise<void> {
      const order = await db.order.findUniqueOrThrow({ where: { id: input.orderId }, select: { customerId: true } });
      await notifier.send({
        idempotencyKey: `${input.orderId}:${input.template}`,
        customerId: order.customerId,
        orderId: input.orderId,
        template: input.template,
      });
    },
  };
}
