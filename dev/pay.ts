import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.js';
import { signedCallback } from './payment-callback.js';
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

  const order = await fetch(`${api}/orders/${orderId}`);
  if (!order.ok) throw new StartupError(`GET /orders/${orderId} answered ${order.status}: ${await order.text()}`);
  const { totalCents } = (await order.json()) as { totalCents: number };

  const { body, headers } = signedCallback(config.webhookSecret, {
    paymentId: values['payment-id'] ?? `pay-${randomUUID()}`,
    orderId,
    amountCents: values.amount === undefined ? totalCents : Number(values.amount),
    paidAt: new Date().toISOString(),
  });
  const res = await fetch(`${api}/payments/callback`, { method: 'POST', headers, body });
  console.log(`POST /payments/callback ${body}\n→ ${res.status} ${await res.text()}`);
});
