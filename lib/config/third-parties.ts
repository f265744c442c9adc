import { z } from 'zod';
import { CURRENCIES, type Currency } from '../currencies.js';
import { ConfigError, duration, nonEmpty } from './env.js';
import { DEV_WEBHOOK_SECRET, NOT_EMBEDDED, secret } from './secrets.js';
import { StripeSchema, stripeSettings, type StripeSettings } from './stripe.js';

/**
 * The payment providers there are: Stripe (adapters/stripe), the only one the service's worker
 * runs on, and the local fake, which only the local stack's worker runs (with the other fakes).
 */
export const THIRD_PARTY_KINDS = ['fake', 'stripe'] as const;
export type ThirdPartyKind = (typeof THIRD_PARTY_KINDS)[number];
/** The local payment provider's two kinds (dev/fakes/payment-provider.ts): one that cancels payments, one that only calls back. */
export const FAKE_PAYMENTS_MODES = ['cancellable', 'callback-only'] as const;
export type FakePaymentsMode = (typeof FAKE_PAYMENTS_MODES)[number];

/** Which third parties the worker calls, how payments reach the service, and the local fakes' switches. */
export const ThirdPartiesSchema = z.object({
  PAYMENT_WEBHOOK_SECRET: nonEmpty.optional(),
  FAULTS_ENABLED: z.enum(['true', 'false']).optional(),
  // Addition (docs/operations.md, "Configuration"): which third parties the worker calls.
  THIRD_PARTIES: z.enum(THIRD_PARTY_KINDS).optional(),
  // Additions (docs/stripe.md, "At the deadline"): the local provider's kind, and the currency payments are created in.
  FAKE_PAYMENTS: z.enum(FAKE_PAYMENTS_MODES).default('cancellable'),
  CURRENCY: z
    .enum(CURRENCIES, {
      error: `must be an ISO 4217 code in lower case that the service supports: ${CURRENCIES.join(', ')}`,
    })
    .default('eur'),
  // Addition (docs/stripe.md, "Only the order's own money pays it"): how long money for no order is held.
  UNCLAIMED_REFUND_GRACE: nonEmpty.default('24h'),
  ...StripeSchema.shape,
});

export interface ThirdPartySettings {
  /** PAYMENT_WEBHOOK_SECRET, the payment callback's key; undefined with Stripe, which has a webhook of its own. */
  webhookSecret: string | undefined;
  /**
   * The third parties the worker calls. Unset (the default, except under the fully embedded stack):
   * none is configured and the worker refuses to start (requireThirdParties).
   */
  thirdParties: ThirdPartyKind | undefined;
  /** Set exactly when THIRD_PARTIES=stripe. */
  stripe: StripeSettings | undefined;
  /** The local payment provider's kind, with THIRD_PARTIES=fake. */
  fakePayments: FakePaymentsMode;
  /** ISO 4217, lower case: every payment is created in it. */
  currency: Currency;
  /** How long money taken for no order of ours is held for an operator before it is refunded (UNCLAIMED_REFUND_GRACE). */
  unclaimedRefundGraceMs: number;
  /** The fault-injection endpoints for the local fakes; only with THIRD_PARTIES=fake. */
  faultsEnabled: boolean;
}

export function thirdPartySettings(
  e: z.infer<typeof ThirdPartiesSchema>,
  { embedded, production }: { embedded: boolean; production: boolean },
): ThirdPartySettings {
  // The fakes and their fault injection belong to the embedded stack, where nothing real is at
  // stake: on by default there, and fault injection refused anywhere else.
  const thirdParties = e.THIRD_PARTIES ?? (embedded ? 'fake' : undefined);
  // With Stripe the callback is not mounted (api/app.ts), so its key is neither needed nor kept.
  const webhookSecret =
    thirdParties === 'stripe'
      ? undefined
      : secret('PAYMENT_WEBHOOK_SECRET', e.PAYMENT_WEBHOOK_SECRET, DEV_WEBHOOK_SECRET, embedded);
  // Off by default on Stripe: faults drive the local payment provider, which Stripe replaces.
  const faultsEnabled =
    e.FAULTS_ENABLED === undefined ? embedded && thirdParties === 'fake' : e.FAULTS_ENABLED === 'true';
  if (faultsEnabled && !embedded)
    throw new ConfigError(
      `FAULTS_ENABLED: fault injection is refused outside npm start's embedded stack (${NOT_EMBEDDED}); set FAULTS_ENABLED=false`,
    );
  if (faultsEnabled && thirdParties !== 'fake') {
    throw new ConfigError('FAULTS_ENABLED: fault injection drives the local fakes only; it needs THIRD_PARTIES=fake');
  }
  return {
    webhookSecret,
    thirdParties,
    stripe: thirdParties === 'stripe' ? stripeSettings(e, { embedded, production }) : undefined,
    fakePayments: e.FAKE_PAYMENTS,
    currency: e.CURRENCY,
    unclaimedRefundGraceMs: duration('UNCLAIMED_REFUND_GRACE', e.UNCLAIMED_REFUND_GRACE),
    faultsEnabled,
  };
}

/**
 * Whose money pays an order: a payment counts only in this currency, in this mode and on this
 * Connect account (store/received-payments.ts). The local fakes are a test-mode provider.
 */
export interface PaymentAccount {
  currency: Currency;
  livemode: boolean;
  connectAccount: string | null;
}

export function paymentAccount(config: Pick<ThirdPartySettings, 'currency' | 'stripe'>): PaymentAccount {
  return {
    currency: config.currency,
    livemode: config.stripe?.livemode ?? false,
    connectAccount: config.stripe?.connectAccount ?? null,
  };
}

/**
 * The third parties the local stack's worker must call, or a ConfigError saying that none is
 * configured: it runs Stripe, or the fakes knowingly.
 */
export function requireThirdParties(config: Pick<ThirdPartySettings, 'thirdParties'>): ThirdPartyKind {
  if (config.thirdParties !== undefined) return config.thirdParties;
  throw new ConfigError(
    'THIRD_PARTIES: no payment provider is configured; set THIRD_PARTIES=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET), ' +
      'or THIRD_PARTIES=fake to run on the local fakes (development and demos only, nothing real is paid or sent)',
  );
}
