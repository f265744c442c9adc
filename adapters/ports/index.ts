import type { InvoiceService, LoyaltyService } from './fulfillment-services.js';
import type { Notifier } from './notifier.js';
import type { PaymentProvider } from './payment-provider.js';

export type { InvoiceService, LoyaltyService, Notifier, PaymentProvider };

/**
 * The third parties this service calls, one adapter each.
 *
 * Failure contract: an adapter reports the provider's own failure as an ApplicationFailure whose
 * type is one of THIRD_PARTY_FAILURES (domain/errors.ts): `THIRD_PARTY_UNAVAILABLE`, retryable (down,
 * timing out, overloaded), or `THIRD_PARTY_REJECTED`, non-retryable (it refused the request for
 * good). Only these may end a bounded step: a notice given up, a fulfillment step dead-lettered, a
 * refund held for an operator. Anything else an adapter throws is taken to be our own fault and is
 * retried until it succeeds. Every call carries an idempotency key, so a retry acts at most once.
 *
 * The worker's entry hands them in: the service's (worker/main.ts, wired in worker/third-parties.ts)
 * Stripe, the customer's email and the webhook endpoints with a fulfilment role; the local stack's
 * the local fakes.
 */
export interface ThirdParties {
  paymentProvider: PaymentProvider;
  notifier: Notifier;
  invoices: InvoiceService;
  loyalty: LoyaltyService;
}
