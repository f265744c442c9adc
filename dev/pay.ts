import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sendPaymentCallback } from '../api/webhook-signature.js';
import { loadConfig } from '../lib/config/index.js';
import { createDb } from '../lib/db.js';
import { embeddedDatabaseUrl } from './embedded.js';
import { chargeFakePayment } from './fakes/payment-provider.js';
import { runMain, StartupError } from './startup-error.js';

/**
 * `npm run pay -- <orderId> [--amount <cents>] [--payment-id <id>]`: plays the customer and the
 * payment provider against the running API. Where the local provider holds a payment for the order
 * (FAKE_PAYMENTS=cancellable, npm start's default), the customer pays it first, and the provider
 * refuses a payment it has cancelled, as a real one would, and a second call delivers the paid
 * payment's webhook again; then it sends the correctly signed callback for the order's total (or the
 * amount given). With a callback-only provider, send the same --payment-id twice to see a redelivery
 * have one effect.
 */
runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { amount: { type: 'string' }, 'payment-id': { type: 'string' } },
  });
  const orderId = positionals[0];
  if (!orderId) throw new StartupError('usage: npm run pay -- <orderId> [--amount <cents>] [--payment-id <id>]');
  const config = loadConfig();
  const { webhookSecret } = config;
  if (webhookSecret === undefined)
    throw new StartupError(
      'npm run pay plays the local payment provider; with THIRD_PARTIES=stripe, pay through Stripe',
    );
  const api = `http://127.0.0.1:${config.port}`;

  // Reading the order's total is an operator's call; the callback itself is signed, not authorised.
  const order = await fetch(`${api}/orders/${orderId}`, { headers: { authorization: `Bearer ${config.adminToken}` } });
  if (!order.ok) throw new StartupError(`GET /orders/${orderId} answered ${order.status}: ${await order.text()}`);
  const { totalCents } = (await order.json()) as { totalCents: number };
  const amountCents = values.amount === undefined ? totalCents : Number(values.amount);

  const db = createDb(config.databaseUrl ?? embeddedDatabaseUrl(), { maxConnections: 1 });
  const charge = await chargeFakePayment(db, { orderId, amountCents }).finally(() => db.$disconnect());
  if (charge.outcome === 'REFUSED' && charge.status !== 'SUCCEEDED') {
    throw new StartupError(`the payment provider refused: the order's payment is ${charge.status}`);
  }
  // Paid already: the provider delivers that payment's webhook again.
  const paid = charge.outcome === 'NO_PAYMENT' ? undefined : charge.payment;
  const { status, body, sent } = await sendPaymentCallback(api, webhookSecret, {
    paymentId: paid?.paymentId ?? values['payment-id'] ?? `pay-${randomUUID()}`,
    orderId,
    amountCents: paid?.amountCents ?? amountCents,
    paidAt: paid?.paidAt ?? new Date().toISOString(),
  });
  console.log(`POST /payments/callback ${sent}\n→ ${status} ${body}`);
});
