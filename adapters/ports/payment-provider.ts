import type { PaymentOrigin } from '../../domain/payment-origin.js';

/**
 * The payment's whole life at the provider: created for a placed order, cancelled at its deadline
 * before the order is (the provider has the last word on whether it was paid), refunded.
 *
 * A provider that can cancel a payment (`cancelsPayments`: Stripe, the default local fake) is closed
 * first at the deadline, and only a cancelled payment lets the order go. One that cannot (a
 * callback-only provider without an SDK) keeps the database-first path: the guarded cancel decides,
 * and a payment that arrives after the deadline is refunded; it is never asked to create or cancel.
 *
 * Failures follow the contract of ThirdParties (index.ts), with one exception: cancelPayment
 * answers UNAVAILABLE instead of throwing, because at the deadline the workflow, not a retry
 * policy, decides how long an order waits for its provider.
 */
export interface PaymentProvider {
  readonly cancelsPayments: boolean;
  /** Once per order (the idempotency key is derived from orderId): a repeat answers the same payment. */
  createPayment(request: NewPayment): Promise<CreatedPayment>;
  /**
   * Cancels a payment nothing is under way for; one in a customer's action (CUSTOMER_ACTION) only
   * with `duringCustomerAction`, once the grace given to that action is over.
   */
  cancelPayment(request: PaymentRef, options?: { duringCustomerAction?: boolean }): Promise<ProviderClosing>;
  /** Gives a captured payment back to the customer; the same paymentId is refunded at most once. */
  refund(request: RefundRequest): Promise<{ refundRef: string }>;
  /**
   * The provider's recent payment and refund events that its webhook may not have delivered (Stripe:
   * those not yet delivered, or given up on; a provider that cannot tell lists them all), for the
   * provider sweep to feed through the webhook's own path. Throws as the other calls do.
   */
  listEvents(request: EventsRequest): Promise<EventsPage>;
}

export interface NewPayment {
  orderId: string;
  amountCents: number;
  /** ISO 4217, e.g. `eur`. */
  currency: string;
  /** Ours, not the provider's: kept with the payment for support and reconciliation. */
  customerId: string;
}

export interface CreatedPayment {
  /** The provider's id of the payment (Stripe: the PaymentIntent's). */
  paymentId: string;
  /** What the customer's client needs to pay; handed to that customer only. */
  clientSecret: string;
}

/** By the provider's id, or by the order (found through the order id the payment carries). */
export type PaymentRef = { paymentId: string } | { orderId: string };

export interface RefundRequest {
  paymentId: string;
  amountCents: number;
}

/**
 * The provider's answer to closing a payment, in the words the closing keeps up to the workflow:
 * closePayment (activities/provider-payments.ts) passes them on, naming a taken payment by its id.
 */
export type ProviderClosing =
  /** Nothing can be paid any more (also when there was nothing to pay, or it had been cancelled). */
  | { outcome: 'CLOSED' }
  /** Too late: the customer paid; the order must be treated as paid with this payment. */
  | { outcome: 'PAID_AT_PROVIDER'; payment: SucceededPayment }
  /** The customer is in the middle of an action (3-D Secure, a redirect): it may still succeed; not cancelled. */
  | { outcome: 'CUSTOMER_ACTION' }
  /** The money is on its way (a debit processing, a voucher or a bank transfer not paid yet): it cannot be cancelled. */
  | { outcome: 'FUNDS_IN_TRANSIT' }
  /** The provider could not be reached or did not answer: nothing is known. */
  | { outcome: 'UNAVAILABLE' };

export interface SucceededPayment extends PaymentOrigin {
  paymentId: string;
  /** What the provider received, which is what a refund gives back. */
  amountCents: number;
  /** ISO 8601: when the customer paid, by the provider's clock. */
  paidAt: string;
}

/**
 * OPEN: waiting for the customer, nothing under way (cancelling stops it; a debit that bounced is
 * OPEN again); CUSTOMER_ACTION: the customer is in a 3-D Secure challenge or a redirect, which may
 * still succeed, and which may be cancelled; FUNDS_IN_TRANSIT: the customer has done their part and
 * the money travels (a bank debit, a voucher to pay at a store, a bank transfer), for days;
 * SUCCEEDED: paid; CANCELLED: can never be paid.
 */
export const PROVIDER_PAYMENT_STATUSES = [
  'OPEN',
  'CUSTOMER_ACTION',
  'FUNDS_IN_TRANSIT',
  'SUCCEEDED',
  'CANCELLED',
] as const;
export type ProviderPaymentStatus = (typeof PROVIDER_PAYMENT_STATUSES)[number];

export interface ProviderPayment extends PaymentOrigin {
  paymentId: string;
  /** The order it was created for; undefined for a payment this service did not create. */
  orderId: string | undefined;
  /** Asked for at creation; once SUCCEEDED, what was received. */
  amountCents: number;
  status: ProviderPaymentStatus;
  /** Set once SUCCEEDED. */
  paidAt: string | undefined;
}

/** The payment events the service reads; a provider sends each at least once, in any order. */
export const PAYMENT_EVENT_TYPES = [
  'payment_intent.succeeded',
  'payment_intent.processing',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
] as const;
export type PaymentEventType = (typeof PAYMENT_EVENT_TYPES)[number];

export interface PaymentEvent {
  /** The provider's event id: the same event delivered again, or read again, has the same id. */
  eventId: string;
  type: PaymentEventType;
  payment: ProviderPayment;
}

/**
 * A refund the provider had accepted that did not give the money back: the card issuer turned it
 * down, or a refund waiting for the customer's action expired or was cancelled.
 */
export interface RefundFailedEvent {
  eventId: string;
  type: 'refund.failed';
  refund: { refundRef: string; paymentId: string; reason: string };
}

/** An event of the provider's as the service reads it, whether its webhook posted it or a sweep listed it. */
export type ProviderEvent = PaymentEvent | RefundFailedEvent;

/**
 * Where a listing of the provider's events starts: those created at or after `createdSince`, and,
 * to go on with a listing cut short, only those listed after `startingAfter` (an event's id).
 */
export interface EventsRequest {
  /** ISO 8601. */
  createdSince: string;
  startingAfter: string | undefined;
  /** At most this many events in the page. */
  limit: number;
}

export interface EventsPage {
  /**
   * Newest first. `event` is undefined for a listed event the service does not act on; its id and
   * time still count for where the listing goes on.
   */
  events: Array<{ eventId: string; createdAt: string; event: ProviderEvent | undefined }>;
  /** More events older than the last one listed remain in the window. */
  hasMore: boolean;
}
