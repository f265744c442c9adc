import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sendPaymentCallback } from '../api/webhook-signature.js';
import { loadConfig } from '../lib/config/index.js';
import { createDb } from '../lib/db.js';
import { embeddedDatabaseUrl } from './embedded.js';
import {
  chargeFakePayment,
  FAKE_PAYMENT_MOVES,
  moveFakePayment,
  type FakePaymentMove,
} from './fakes/payment-provider.js';
import { runMain, StartupError } from './startup-error.js';

/**
 * `npm run pay -- <orderId> --move action|funds|bounce`: with the cancellable provider, moves the
 * order's payment short of paying it: `action` starts a 3-D Secure challenge, `funds` submits a
 * debit (money on its way), `bounce` fails that debit. Nothing is sent: what the order's run does
 * at the deadline shows it.
 *
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
    options: { amount: { type: 'string' }, 'payment-id': { type: 'string' }, move: { type: 'string' } },
  });
  const orderId = positionals[0];
  if (!orderId)
    throw new StartupError(
      'usage: npm run pay -- <orderId> [--amount <cents>] [--payment-id <id>] | --move action|funds|bounce',
    );
  const config = loadConfig();
  if (values.move !== undefined) {
    if (!(values.move in FAKE_PAYMENT_MOVES)) throw new StartupError('--move must be action, funds or bounce');
    const db = createDb(config.databaseUrl ?? embeddedDatabaseUrl(), { maxConnections: 1 });
    const moved = await moveFakePayment(db, { orderId, to: values.move as FakePaymentMove }).finally(() =>
      db.$disconnect(),
    );
    if (moved.outcome === 'NO_PAYMENT') throw new StartupError('the local provider holds no payment for this order');
    if (moved.outcome === 'REFUSED') throw new StartupError(`the order's payment is ${moved.status}: it cannot move`);
    console.log(`the order's payment is now ${moved.payment.status}`);
    return;
  }
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
