import type { NotificationTemplate } from '../../domain/statuses.js';

/** Messaging (e-mail/SMS). The key makes a redelivered request a no-op at the provider. */
export interface Notifier {
  send(message: {
    idempotencyKey: string;
    customerId: string;
    orderId: string;
    template: NotificationTemplate;
  }): Promise<void>;
}
