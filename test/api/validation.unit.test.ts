import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';

/**
 * The API refuses bad input by its schemas alone, before it reaches the database or Temporal (the
 * app here throws if either is touched, which would answer 500). The same properties against the
 * real backends, with "nothing changed" checked in the database, are bad-input.property.test.ts.
 */
const ORDER_ID = '00000000-0000-4000-8000-000000000000';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

const badOrderBody = fc.oneof(
  fc.constant({}),
  fc.record({ customerId: fc.constant('c1'), items: fc.constant([]) }),
  fc.record({
    customerId: fc.constant('c1'),
    items: fc.array(fc.record({ sku: fc.constant('TEA'), quantity: fc.integer({ max: 0 }) }), { minLength: 1 }),
  }),
  fc.record({
    customerId: fc.constant('c1'),
    items: fc.constant([
      { sku: 'TEA', quantity: 1 },
      { sku: 'TEA', quantity: 2 },
    ]),
  }),
  fc.record({ customerId: fc.constant('c1'), items: fc.constant([{ sku: 'TEA', quantity: 1.5 }]) }),
  fc.record({ customerId: fc.constant('c1'), items: fc.constant([{ sku: 'x'.repeat(200), quantity: 1 }]) }),
  fc.record({ customerId: fc.constant('c1'), items: fc.constant([{ sku: 'TEA', quantity: 1 }]), extra: fc.string() }),
  // A lone surrogate (`"\ud800"` in the JSON) has no UTF-8 form.
  fc.record({ customerId: fc.constant('c\ud800'), items: fc.constant([{ sku: 'TEA', quantity: 1 }]) }),
);

async function send(base: string, method: string, path: string, body: unknown) {
  const res = await fetch(base + path, { method, headers: admin, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
}

describe('bad input is refused by the schemas, before any backend', () => {
  it('POST /orders: empty, zero, fractional, repeated or oversized items, unknown fields', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      await fc.assert(
        fc.asyncProperty(badOrderBody, async (body) => {
          const res = await send(base, 'POST', '/orders', body);
          expect(res.status, JSON.stringify(body)).toBe(400);
          expect(res.body.error?.code).toBe('VALIDATION_FAILED');
        }),
        { numRuns: 60 },
      );
    });
  });

  it('operator bodies: an extension, a product and a coupon outside their limits', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const cases: Array<[string, string, unknown]> = [
        ['POST', `/orders/${ORDER_ID}/extend`, { minutes: 0 }],
        ['POST', `/orders/${ORDER_ID}/extend`, { minutes: 'ten' }],
        ['PUT', '/products/TEA', { name: 'Tea', priceCents: -1, stock: 1 }],
        ['PUT', '/products/TEA', { name: '', priceCents: 100, stock: 1 }],
        ['PUT', '/coupons/WELCOME', { discountCents: 1.5 }],
        ['GET', '/orders/not-a-uuid', undefined],
      ];
      for (const [method, path, body] of cases) {
        const res =
          body === undefined
            ? await fetch(base + path, { headers: admin }).then(async (r) => ({
                status: r.status,
                body: (await r.json()) as { error?: { code: string } },
              }))
            : await send(base, method, path, body);
        expect(res.status, `${method} ${path}`).toBe(400);
        expect(res.body.error?.code, `${method} ${path}`).toBe('VALIDATION_FAILED');
      }
    });
  });
});
