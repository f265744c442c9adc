/** Invoicing: issues one invoice per idempotency key. */
export interface InvoiceService {
  issue(request: { idempotencyKey: string; orderId: string; customerId: string; amountCents: number }): Promise<void>;
}

/** The loyalty programme: credits points once per idempotency key. */
export interface LoyaltyService {
  award(request: { idempotencyKey: string; orderId: string; customerId: string; points: number }): Promise<void>;
}
