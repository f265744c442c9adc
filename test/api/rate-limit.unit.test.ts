import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../api/endpoints.js';
import { signCustomerToken } from '../../dev/customer-token.js';
import { ADMIN_TOKEN, appWithoutBackends, CUSTOMER_JWT_SECRET, listening } from '../helpers/app-without-backends.js';

/**
 * The per-customer budgets as the endpoint table declares them and the mount applies them. Past the
 * limiter every call here touches a backend, which this app refuses: 500 means "let in", so a 429
 * shows the call was stopped before it could take a database connection.
 */
const LET_IN = 500;
const LIMIT = 3;
const perMinute = (limit: number) => ({ limit, windowMs: 60_000 });

async function call(base: string, method: string, path: string, token: string) {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code, retryAfter: res.headers.get('retry-after') };
}

/** A customer's calls other than placing an order: each reads the main pool the webhook and checkout need. */
const reads = (id: string) =>
  [
    ['GET', '/orders?limit=200'],
    ['GET', `/orders/${id}`],
    ['POST', `/orders/${id}/cancel`],
  ] as const;

describe('a customer token cannot take every database connection', () => {
  it('every endpoint a customer may call counts against a budget', () => {
    const unlimited = ENDPOINTS.filter((e) => e.access === 'customerOrOperator' && e.rateLimit === undefined);
    expect(unlimited.map((e) => `${e.method.toUpperCase()} ${e.path}`)).toEqual([]);
  });

  it(`reads and cancels share one budget per customer: past ${LIMIT} each is 429 with Retry-After`, async () => {
    const app = appWithoutBackends({ faultsEnabled: false, readsRateLimit: perMinute(LIMIT) });
    const [reader, neighbour] = await Promise.all([
      signCustomerToken(CUSTOMER_JWT_SECRET, 'reader'),
      signCustomerToken(CUSTOMER_JWT_SECRET, 'neighbour'),
    ]);
    await listening(app, async (base) => {
      for (const [method, path] of reads(randomUUID()))
        expect((await call(base, method, path, reader)).status).toBe(LET_IN);
      for (const [method, path] of reads(randomUUID())) {
        const refused = await call(base, method, path, reader);
        expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
        expect(Number(refused.retryAfter)).toBeGreaterThan(0);
        expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
      }
      // Counted per customer; operators are not limited.
      expect((await call(base, 'GET', '/orders', neighbour)).status).toBe(LET_IN);
      for (let i = 0; i <= LIMIT; i++) expect((await call(base, 'GET', '/orders', ADMIN_TOKEN)).status).toBe(LET_IN);
    });
  });

  it("placements keep a count of their own: reads do not use them up, nor they the reads'", async () => {
    const app = appWithoutBackends({
      faultsEnabled: false,
      ordersRateLimit: perMinute(1),
      readsRateLimit: perMinute(1),
    });
    const reader = await signCustomerToken(CUSTOMER_JWT_SECRET, 'reads-first');
    const placer = await signCustomerToken(CUSTOMER_JWT_SECRET, 'places-first');
    await listening(app, async (base) => {
      // A read, then a placement: let in. Past the limiter, the missing body is refused by validation.
      expect((await call(base, 'GET', '/orders', reader)).status).toBe(LET_IN);
      expect(await call(base, 'POST', '/orders', reader)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      // A placement, then a read: let in.
      expect(await call(base, 'POST', '/orders', placer)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      expect((await call(base, 'GET', '/orders', placer)).status).toBe(LET_IN);
      // Each budget of one is spent by its own call.
      for (const token of [reader, placer]) {
        expect(await call(base, 'POST', '/orders', token)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
        expect(await call(base, 'GET', '/orders', token)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      }
    });
  });

  it('turned off (0), reads are never limited', async () => {
    const app = appWithoutBackends({ faultsEnabled: false, readsRateLimit: perMinute(0) });
    const token = await signCustomerToken(CUSTOMER_JWT_SECRET, 'reader');
    await listening(app, async (base) => {
      for (let i = 0; i < 20; i++) expect((await call(base, 'GET', '/orders', token)).status).toBe(LET_IN);
    });
  });
});
