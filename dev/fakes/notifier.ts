import type { Notifier } from '../../adapters/ports/index.js';
import type { NotificationTemplate } from '../../domain/statuses.js';
import type { FakeRecorder } from './recorder.js';

export class FakeNotifier implements Notifier {
  constructor(private readonly recorder: FakeRecorder) {}

  async send(message: {
    idempotencyKey: string;
    customerId: string;
    orderId: string;
    template: NotificationTemplate;
  }): Promise<void> {
    await this.recorder.record('notification', message.template, message.idempotencyKey, message);
  }
}
