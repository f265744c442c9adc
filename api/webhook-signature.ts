import { createHmac, timingSafeEqual } from 'node:crypto';

/** The payment provider's signature scheme, in one place: HMAC-SHA256(secret, timestamp + "." + rawBody). */
export const SIGNATURE_HEADER = 'X-Payment-Signature';
export const TIMESTAMP_HEADER = 'X-Payment-Timestamp';
/** A signed callback older or newer than this is refused, so a captured one cannot be replayed later. */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

export function signPayload(secret: string, timestampSeconds: number, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
  return `sha256=${mac}`;
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
