/** The part of the payment provider's API this service calls. Both calls are idempotent at the provider. */
export interface PaymentProvider {
  /** Gives a captured payment back to the customer; the same paymentId is refunded at most once. */
  refund(request: { paymentId: string; amountCents: number }): Promise<{ refundRef: string }>;
  /** Stops the order's pending payment intent from being paid after the order was cancelled. */
  closeIntent(request: { orderId: string }): Promise<void>;
}
