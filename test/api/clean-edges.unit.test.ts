import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';

/**
 * No input reaches a backend that would refuse it with a 500: control characters (PostgreSQL
 * refuses NUL in text) and strings past their limits are 400 by the schemas. The app here throws
 * if the database or Temporal is touched, so an input that got past the schemas would answer 500.
 */
const ORDER_ID = '00000000-0000-4000-8000-000000000000';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const CONTROL = ['\u0000', '\u0007', '\u001b', '\u007f', '\u0085', '\u009f'];

async function send(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: admin,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
}

describe('control characters and oversized strings are 400 VALIDATION_FAILED, never 5xx', () => {
  it('in a query, a body and a path, wherever a free-text string is taken', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      for (const c of CONTROL) {
        const calls: Array<[string, string, unknown?]> = [
          ['GET', `/orders?customerId=${encodeURIComponent(`alice${c}`)}`],
          ['POST', '/orders', { customerId: `al${c}ice`, items: [{ sku: 'TEA', quantity: 1 }] }],
          ['PUT', '/products/TEA', { name: `Tea${c}`, priceCents: 100, stock: 1 }],
          ['POST', `/orders/${ORDER_ID}/payments/${encodeURIComponent(`p${c}1`)}/refund/retry`],
        ];
        for (const [method, path, body] of calls) {
          const res = await send(base, method, path, body);
          expect(
            { status: res.status, code: res.body.error?.code },
            `${method} ${path} ${JSON.stringify(body)}`,
          ).toEqual({
            status: 400,
            code: 'VALIDATION_FAILED',
          });
        }
      }
    });
  });

  it('one character past each limit, and far past it', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      for (const length of [129, 8_000]) {
        const long = 'x'.repeat(length);
        for (const [method, path, body] of [
          ['GET', `/orders?customerId=${long}`],
          ['POST', '/orders', { customerId: long, items: [{ sku: 'TEA', quantity: 1 }] }],
          ['PUT', '/products/TEA', { name: 'x'.repeat(length + 72), priceCents: 100, stock: 1 }],
        ] as Array<[string, string, unknown?]>) {
          const res = await send(base, method, path, body);
          expect(res.status, `${method} ${path.slice(0, 40)} (${length})`).toBe(400);
        }
      }
    });
  });
});

describe('Cache-Control: no-store on every answer that needs credentials', () => {
  it('on operator, customer and provider routes, refusals included; public ones may be cached', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const noStore = async (path: string, init: RequestInit = {}) =>
        (await fetch(base + path, init)).headers.get('cache-control');
      expect(await noStore('/ui/config', { headers: admin })).toBe('no-store');
      expect(await noStore('/ui/config')).toBe('no-store'); // 401
      expect(await noStore('/orders?customerId=%00', { headers: admin })).toBe('no-store'); // 400
      expect(await noStore('/payments/callback', { method: 'POST', body: '{}' })).toBe('no-store'); // 401 INVALID_SIGNATURE
      expect(await noStore('/openapi.json')).not.toBe('no-store');
    });
  });
});
