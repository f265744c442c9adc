import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import express, { Router } from 'express';
import type { Db } from '../../lib/db.js';
import { requireAdmin } from '../auth.js';
import { ApiError, businessError, parseInput } from '../errors.js';
import { OrderIdParam } from '../schemas.js';
import { sendPaymentCallback } from '../webhook-signature.js';

const PUBLIC_DIR = fileURLToPath(new URL('../public', import.meta.url));

export interface OrdersPageDeps {
  db: Db;
  temporal: Client;
  temporalUiUrl: string;
  webhookSecret: string;
  adminToken: string;
  /** Dev mode (FAULTS_ENABLED): the page offers "simulate payment". */
  faultsEnabled: boolean;
}

/**
 * The operators' orders page at `/` (static HTML and a small script, no build step), what it needs
 * to know about this deployment, and in dev mode the server-side signer behind its pay button.
 * The page itself is public (it holds no data); everything it loads needs the admin token, which
 * the operator types into it.
 */
export function ordersPageRouter({
  db,
  temporal,
  temporalUiUrl,
  webhookSecret,
  adminToken,
  faultsEnabled,
}: OrdersPageDeps): Router {
  const router = Router();
  const admin = requireAdmin(adminToken);
  router.use(express.static(PUBLIC_DIR, { index: 'index.html', redirect: false }));
  router.get('/ui/config', admin, (_req, res) => {
    res.json({ temporalUiUrl, namespace: temporal.options.namespace, devMode: faultsEnabled });
  });
  if (!faultsEnabled) return router;

  // Dev only: the secret stays on the server; the browser asks, the server signs and calls its own webhook.
  router.post('/dev/orders/:id/simulate-payment', admin, async (req, res) => {
    const { id } = parseInput(OrderIdParam, req.params);
    const order = await db.order.findUnique({ where: { id }, select: { totalCents: true } });
    if (!order) throw businessError('UNKNOWN_ORDER');
    const self = `http://127.0.0.1:${req.socket.localPort}`;
    const notice = {
      paymentId: `sim-${randomUUID()}`,
      orderId: id,
      amountCents: order.totalCents,
      paidAt: new Date().toISOString(),
    };
    const callback = await sendPaymentCallback(self, webhookSecret, notice);
    if (callback.status !== 202)
      throw new ApiError('CALLBACK_REFUSED', `the webhook answered ${callback.status}`, callback.body);
    res.status(202).json({ paymentId: notice.paymentId, callbackStatus: callback.status });
  });
  return router;
}
