import type { PaymentProvider } from '../../activities/third-party/index.js';
import type { FakeRecorder } from './recorder.js';

export class FakePaymentProvider implements PaymentProvider {
  constructor(private readonly recorder: FakeRecorder) {}

  async refund(request: { paymentId: string; amountCents: number }): Promise<{ refundRef: string }> {
    await this.recorder.record('payments', 'refund', request.paymentId, request);
    return { refundRef: `fake-refund-${request.paymentId}` };
  }

  async closeIntent(request: { orderId: string }): Promise<void> {
    await this.recorder.record('payments', 'closeIntent', request.orderId, request);
  }
}
