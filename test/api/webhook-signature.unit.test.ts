import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from '../../api/webhook-signature.js';

const secret = 's3cret';
const body = Buffer.from('{"paymentId":"p"}');
const now = 1_800_000_000_000;
const ts = String(now / 1000);

describe('webhook signature', () => {
  it('accepts the provider scheme: sha256=hex(HMAC(secret, timestamp + "." + rawBody))', () => {
    expect(
      verifySignature(secret, { timestamp: ts, signature: signPayload(secret, now / 1000, body) }, body, now),
    ).toBe(true);
  });

  it('refuses a wrong secret, another body, a stale or future timestamp, and malformed headers', () => {
    const good = signPayload(secret, now / 1000, body);
    expect(verifySignature('other', { timestamp: ts, signature: good }, body, now)).toBe(false);
    expect(verifySignature(secret, { timestamp: ts, signature: good }, Buffer.from('{"paymentId":"q"}'), now)).toBe(
      false,
    );
    expect(verifySignature(secret, { timestamp: ts, signature: good }, body, now + 301_000)).toBe(false);
    expect(verifySignature(secret, { timestamp: ts, signature: good }, body, now - 301_000)).toBe(false);
    expect(verifySignature(secret, { timestamp: undefined, signature: good }, body, now)).toBe(false);
    expect(verifySignature(secret, { timestamp: ts, signature: undefined }, body, now)).toBe(false);
    expect(verifySignature(secret, { timestamp: `${ts}.5`, signature: good }, body, now)).toBe(false);
    expect(verifySignature(secret, { timestamp: ts, signature: good.toUpperCase() }, body, now)).toBe(false);
  });
});
