import { createHmac, timingSafeEqual } from 'node:crypto';

/** The payment provider's side, in one place: where it posts, and its signature scheme, HMAC-SHA256(secret, timestamp + "." + rawBody). */
export const PAYMENT_CALLBACK_PATH = '/payments/callback';
export const SIGNATURE_HEADER = 'X-Payment-Signature';
export const TIMESTAMP_HEADER = 'X-Payment-Timestamp';
/** A signed callback older or newer than this is refused, so a captured one cannot be replayed later. */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

export function signPayload(secret: string, timestampSeconds: number, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
  return `sha256=${mac}`;
}

/** The two headers the provider sends with a callback: what `npm run pay`, the dev page's button and tests send. */
export function signedHeaders(secret: string, rawBody: string, nowMs: number = Date.now()): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: signPayload(secret, timestamp, rawBody) };
}

/** Plays the payment provider: POSTs a correctly signed callback to the API at `baseUrl`. */
export async function sendPaymentCallback(
  baseUrl: string,
  secret: string,
  notice: { paymentId: string; orderId: string; amountCents: number; paidAt: string },
): Promise<{ status: number; body: string; sent: string }> {
  const sent = JSON.stringify(notice);
  const res = await fetch(`${baseUrl}${PAYMENT_CALLBACK_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signedHeaders(secret, sent) },
    body: sent,
  });
  return { status: res.status, body: await res.text(), sent };
}

/** True only for a well-formed, correct signature over a timestamp within the allowed skew. */
export function verifySignature(
  secret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: Buffer,
  nowMs: number,
): boolean {
  if (!headers.timestamp || !headers.signature || !/^\d{1,12}$/.test(headers.timestamp)) return false;
  const timestamp = Number(headers.timestamp);
  if (Math.abs(nowMs / 1000 - timestamp) > MAX_CLOCK_SKEW_SECONDS) return false;
  const expected = Buffer.from(signPayload(secret, timestamp, rawBody));
  const given = Buffer.from(headers.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
