import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sendPaymentCallback } from '../api/webhook-signature.js';
import { loadConfig } from '../lib/config.js';
import { runMain, StartupError } from './startup-error.js';

/**
 * `npm run pay -- <orderId> [--amount <cents>] [--payment-id <id>]`: plays the payment provider
 * against the running API, sending a correctly signed callback for the order's total (or the
 * amount given). Send the same --payment-id twice to see a redelivery have one effect.
 */
runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { amount: { type: 'string' }, 'payment-id': { type: 'string' } },
  });
  const orderId = positionals[0];
  if (!orderId) throw new StartupError('usage: npm run pay -- <orderId> [--amount <cents>] [--payment-id <id>]');
  const config = loadConfig();
  const api = `http://127.0.0.1:${config.port}`;

  // Reading the order's total is an operator's call; the callback itself is signed, not authorised.
  const order = await fetch(`${api}/orders/${orderId}`, { headers: { authorization: `Bearer ${config.adminToken}` } });
  if (!order.ok) throw new StartupError(`GET /orders/${orderId} answered ${order.status}: ${await order.text()}`);
  const { totalCents } = (await order.json()) as { totalCents: number };

  const { status, body, sent } = await sendPaymentCallback(api, config.webhookSecret, {
    paymentId: values['payment-id'] ?? `pay-${randomUUID()}`,
    orderId,
    amountCents: values.amount === undefined ? totalCents : Number(values.amount),
    paidAt: new Date().toISOString(),
  });
  console.log(`POST /payments/callback ${sent}\n→ ${status} ${body}`);
});
