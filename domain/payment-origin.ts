/**
 * Where a payment's money came from, as the provider states it: what decides whether it may pay an
 * order (store/received-payments.ts), and what an unclaimed payment is recorded with.
 */
export interface PaymentOrigin {
  /** ISO 4217, lower case. */
  currency: string;
  /** Taken in the provider's live mode (Stripe's `livemode`); false: test mode. */
  livemode: boolean;
  /** The Connect account it was taken on (Stripe's `account`); null: the platform's own. */
  connectAccount: string | null;
  /** The customer (ours) its metadata names; undefined: it names none. */
  customerId: string | undefined;
}
