import type { NotificationTemplate } from '../../domain/statuses.js';
import type { FakeRecorder } from './recorder.js';


/** Messaging (e-mail/SMS). The key makes a redelivered request a no-op at the provider. */
export interface Notifier {
  send(message: { idempotencyKey: string; customerId: string; orderId: string; template: NotificationTemplate }): Promise<void>;
}

export class FakeNotifier implements Notifier {
  constructor(private readonly recorder: FakeRecorder) {}

  async send(message: { idempotencyKey: string; customerId: string; orderId: string; template: NotificationTemplate }): Promise<void> {
    await this.recorder.record('notification', message.template, message.idempotencyKey, message);
  }
}
