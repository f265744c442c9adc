import { signedHeaders } from '../api/webhook-signature.js';
import { signCustomerToken } from '../dev/customer-token.js';
import { DEV_CUSTOMER_JWT_SECRET, DEV_WEBHOOK_SECRET } from '../lib/config/secrets.js';

/** How long the bench waits for any answer of the API: a call without one by then counts as failed. */
export const CLIENT_TIMEOUT_MS = 30_000;

/** The calls the bench makes to the service's HTTP API, each timed. */
export interface PlacedViaApi {
  id: string;
  totalCents: number;
  latencyMs: number;
}

/** Places an order as its customer would: with that customer's bearer token (the service runs with the dev secret). */
export async function postOrder(apiBase: string, body: { customerId: string }): Promise<PlacedViaApi> {
  const token = await signCustomerToken(DEV_CUSTOMER_JWT_SECRET, body.customerId);
  const t0 = performance.now();
  const res = await fetch(`${apiBase}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  const json = (await res.json()) as { id: string; totalCents: number };
  const latencyMs = performance.now() - t0;
  if (res.status !== 201) throw new Error(`POST /orders answered ${res.status}: ${JSON.stringify(json)}`);
  return { id: json.id, totalCents: json.totalCents, latencyMs };
}

/** Plays the payment provider: a correctly signed callback for a payment it took (the service runs with the dev secret). */
export async function payOrder(
  apiBase: string,
  payment: { paymentId: string; orderId: string; amountCents: number },
): Promise<number> {
  const body = JSON.stringify({ ...payment, paidAt: new Date().toISOString() });
  const t0 = performance.now();
  const res = await fetch(`${apiBase}/payments/callback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signedHeaders(DEV_WEBHOOK_SECRET, body) },
    body,
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  await res.arrayBuffer();
  if (res.status !== 202) throw new Error(`payment callback answered ${res.status}`);
  return performance.now() - t0;
}
