import { createHmac, randomUUID } from 'node:crypto';

/**
 * The id of a new order. Without an Idempotency-Key: random. With one: the same customer and key
 * always give the same id (a retry reaches the same workflow, `order-<id>`, and the same row), two
 * customers never share one, and nobody without `secret` can compute it: an HMAC, not a public hash.
 */
export function newOrderId(secret: string, customerId: string, idempotencyKey: string | undefined): string {
  if (idempotencyKey === undefined) return randomUUID();
  const bytes = createHmac('sha256', secret)
    .update(JSON.stringify([customerId, idempotencyKey]))
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80; // version 8: "custom" (RFC 9562 §5.8), so it never passes for a random v4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // the RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
