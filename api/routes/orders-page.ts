import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import express, { type RequestHandler } from 'express';
import type { Db } from '../../lib/db.js';
import type { ApiHandler } from '../endpoint-table.js';
import { ApiError, businessError } from '../errors.js';
import { sendPaymentCallback } from '../webhook-signature.js';

const PUBLIC_DIR = fileURLToPath(new URL('../public', import.meta.url));

/**
 * The operators' orders page at `/`: static HTML and a small script, no build step. The page
 * itself is public (it holds no data); everything it loads needs the admin token, which the
 * operator types into it.
 */
export const ordersPageFiles: RequestHandler = express.static(PUBLIC_DIR, { index: 'index.html', redirect: false });

/** What the page needs to know about this deployment; dev mode (FAULTS_ENABLED) offers "simulate payment". */
export const uiConfig: ApiHandler<
  'uiConfig',
  { temporal: Client; temporalUiUrl: string; faultsEnabled: boolean }
> = async (_input, { temporal, temporalUiUrl, faultsEnabled }) => ({
  temporalUiUrl,
  namespace: temporal.options.namespace,
  devMode: faultsEnabled,
});

/** Dev only: the secret stays on the server; the browser asks, the server signs and calls its own webhook. */
export const simulatePayment: ApiHandler<'simulatePayment', { db: Db; webhookSecret?: string | undefined }> = async (
  { params: { id }, localPort },
  { db, webhookSecret },
) => {
  // Mounted with fault injection, which only the local fakes have, and they always have the secret.
  if (webhookSecret === undefined) throw new Error('the payment callback is not mounted: no payment to simulate');
  const order = await db.order.findUnique({ where: { id }, select: { totalCents: true, providerPaymentId: true } });
  if (!order) throw businessError('UNKNOWN_ORDER');
  const notice = {
    // The order's own payment where the provider made one: only that one may pay it.
    paymentId: order.providerPaymentId ?? `sim-${randomUUID()}`,
    orderId: id,
    amountCents: order.totalCents,
    paidAt: new Date().toISOString(),
  };
  const callback = await sendPaymentCallback(`http://127.0.0.1:${localPort}`, webhookSecret, notice);
  if (callback.status !== 202)
    throw new ApiError('CALLBACK_REFUSED', `the webhook answered ${callback.status}`, callback.body);
  return { paymentId: notice.paymentId, callbackStatus: 202 };
};
