import type { NotificationTemplate } from '../../domain/statuses.js';

/** Messaging (e-mail/SMS). The key makes a redelivered request a no-op at the provider. */
export interface Notifier {
  send(message: {
    idempotencyKey: string;
    customerId: string;
    orderId: string;
    template: NotificationTemplate;
    /** Which of several notices of one template for the order: the refunded payment's id for PAYMENT_REFUNDED. */
    key?: string;
  }): Promise<void>;
}
