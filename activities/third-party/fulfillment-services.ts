import type { FakeRecorder } from './recorder.js';

/** Invoicing: issues one invoice per idempotency key. */
export interface InvoiceService {
  issue(request: { idempotencyKey: string; orderId: string; customerId: string; amountCents: number }): Promise<void>;
}

/** The loyalty programme: credits points once per idempotency key. */
export interface LoyaltyService {
  award(request: { idempotencyKey: string; orderId: string; customerId: string; points: number }): Promise<void>;
}

export class FakeInvoiceService implements InvoiceService {
  constructor(private readonly recorder: FakeRecorder) {}

  async issue(request: { idempotencyKey: string; orderId: string; customerId: string; amountCents: number }): Promise<void> {
    await this.recorder.record('invoice', 'issue', request.idempotencyKey, request);
  }
}

export class FakeLoyaltyService implements LoyaltyService {
  constructor(private readonly recorder: FakeRecorder) {}

  async award(request: { idempotencyKey: string; orderId: string; customerId: string; points: number }): Promise<void> {
    await this.recorder.record('loyalty', 'award', request.idempotencyKey, request);
  }
}
