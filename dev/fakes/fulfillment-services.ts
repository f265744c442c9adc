import type { InvoiceService, LoyaltyService } from '../../adapters/ports/index.js';
import type { FakeRecorder } from './recorder.js';

export class FakeInvoiceService implements InvoiceService {
  constructor(private readonly recorder: FakeRecorder) {}

  async issue(request: {
    idempotencyKey: string;
    orderId: string;
    customerId: string;
    amountCents: number;
  }): Promise<void> {
    await this.recorder.record('invoice', 'issue', request.idempotencyKey, request);
  }
}

export class FakeLoyaltyService implements LoyaltyService {
  constructor(private readonly recorder: FakeRecorder) {}

  async award(request: { idempotencyKey: string; orderId: string; customerId: string; points: number }): Promise<void> {
    await this.recorder.record('loyalty', 'award', request.idempotencyKey, request);
  }
}
