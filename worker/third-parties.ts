import { createCustomerEmailNotifier } from '../activities/customer-email-notifier.js';
import type { PaymentProvider, ThirdParties } from '../adapters/ports/index.js';
import { createSmtpMailer } from '../adapters/smtp/mailer.js';
import { createStripeClient } from '../adapters/stripe/client.js';
import { StripePaymentProvider } from '../adapters/stripe/payment-provider.js';
import { ConfigError } from '../lib/config/env.js';
import type { Config } from '../lib/config/index.js';
import type { Db } from '../lib/db.js';
import type { Logger } from '../lib/logger.js';
import { createWebhookFulfillmentServices } from '../webhooks/fulfillment-services.js';

/**
 * The service's third parties: Stripe takes the payments, the customer's email carries the notices
 * (through the same claim as the outbox's email job), and the shop's webhook endpoints with a
 * fulfilment role are its invoicing and loyalty systems. Nothing else: without Stripe's settings or
 * a mail server the worker refuses to start, before it connects to anything.
 */
export async function productionThirdParties(config: Config, db: Db, logger: Logger): Promise<ThirdParties> {
  if (config.thirdParties !== 'stripe')
    throw new ConfigError(
      `THIRD_PARTIES${config.thirdParties === undefined ? '' : `=${config.thirdParties}`}: the worker takes payments through Stripe only; ` +
        "set THIRD_PARTIES=stripe with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (the local fakes run only on npm start's stack)",
    );
  if (config.mail === undefined)
    throw new ConfigError(
      'SMTP_URL: the worker sends the customers\' notices by email; set SMTP_URL and MAIL_FROM (docs/operations.md, "Customer emails")',
    );
  const fulfillment = createWebhookFulfillmentServices({ pool: db.pool, timeoutMs: config.webhooks.timeoutMs, logger });
  return {
    paymentProvider: stripePaymentProvider(config),
    notifier: createCustomerEmailNotifier({
      pool: db.pool,
      mailer: createSmtpMailer(config.mail),
      currency: config.currency,
    }),
    invoices: fulfillment.invoices,
    loyalty: fulfillment.loyalty,
  };
}

/** The payment provider on Stripe (THIRD_PARTIES=stripe's settings). */
export function stripePaymentProvider(config: Config): PaymentProvider {
  const stripe = config.stripe!;
  return new StripePaymentProvider(createStripeClient(stripe), {
    paymentMethods: stripe.paymentMethods,
    awaitingFundsMaxMs: config.paymentHolds.awaitingFundsMaxMs,
    connectAccount: stripe.connectAccount ?? null,
  });
}
