import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { signCustomerToken } from '../../dev/customer-token.js';
import type { TrustProxy } from '../../lib/config/http.js';
import { ADMIN_TOKEN, appWithoutBackends, CUSTOMER_JWT_SECRET, listening } from '../helpers/app-without-backends.js';

/**
 * Prometheus's token opens /metrics and nothing else, and guessed bearer tokens slow their sender
 * down: past the limit an address's further guesses get 429, while credentials that verify always
 * pass, from any address.
 * Past the credential check every call here touches a backend, which this app refuses: 500 means
 * "let in". /metrics is served without its database (its gauges then have no value): 200.
 */
const LET_IN = 500;
const METRICS_SERVED = 200;
const METRICS_TOKEN = 'm'.repeat(32);
const LIMIT = 3;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A GET from a loopback address of our choosing (Linux routes all of 127/8 to this machine). */
function get(base: string, path: string, headers: Record<string, string>, localAddress = '127.0.0.1') {
  return new Promise<{ status: number; headers: Record<string, unknown>; code?: string }>((resolve, reject) => {
    const req = request(`${base}${path}`, { headers, localAddress }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          code: String(res.headers['content-type']).startsWith('application/json')
            ? (JSON.parse(text) as { error?: { code: string } }).error?.code
            : undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('METRICS_TOKEN', () => {
  it('opens /metrics, but no operator route; the admin token still opens /metrics', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false, metricsToken: METRICS_TOKEN }), async (base) => {
      expect((await get(base, '/metrics', bearer(METRICS_TOKEN))).status).toBe(METRICS_SERVED);
      expect((await get(base, '/metrics', bearer(ADMIN_TOKEN))).status).toBe(METRICS_SERVED);
      expect((await get(base, '/metrics', bearer('m'.repeat(31)))).status).toBe(401);
      expect((await get(base, '/metrics', {})).status).toBe(401);
      expect(await get(base, '/ui/config', bearer(METRICS_TOKEN))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(await get(base, '/orders', bearer(METRICS_TOKEN))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    });
  });

  it('unset, only the admin token opens /metrics', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      expect((await get(base, '/metrics', bearer(METRICS_TOKEN))).status).toBe(401);
      expect((await get(base, '/metrics', bearer(ADMIN_TOKEN))).status).toBe(METRICS_SERVED);
    });
  });
});

describe('the Authorization header', () => {
  it('takes the scheme in any case, as RFC 7235 does: a valid token is let in and no refusal is counted', async () => {
    const app = appWithoutBackends({ faultsEnabled: false, authFailureLimit: { limit: LIMIT, windowMs: 60_000 } });
    const customerToken = await signCustomerToken(CUSTOMER_JWT_SECRET, 'c-1');
    await listening(app, async (base) => {
      for (let i = 0; i <= LIMIT; i++)
        expect((await get(base, '/ui/config', { authorization: `bearer ${ADMIN_TOKEN}` })).status).toBe(LET_IN);
      expect((await get(base, '/orders', { authorization: `BEARER ${customerToken}` })).status).toBe(LET_IN);
      expect((await get(base, '/metrics', { authorization: `beARer  ${ADMIN_TOKEN}` })).status).toBe(METRICS_SERVED);
      // A refused one in lower case is a refused bearer token: the challenge says so.
      const refused = await get(base, '/ui/config', { authorization: 'bearer guess' });
      expect(refused).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="order-lifecycle", error="invalid_token"');
      // Another scheme is no bearer token at all.
      expect((await get(base, '/ui/config', { authorization: `Basic ${ADMIN_TOKEN}` })).status).toBe(401);
    });
  });
});

describe('refused bearer tokens, per client address', () => {
  const throttled = (limit = LIMIT) =>
    appWithoutBackends({
      faultsEnabled: false,
      metricsToken: METRICS_TOKEN,
      authFailureLimit: { limit, windowMs: 60_000 },
    });
  /** Signed with a secret that is not the service's: a well-formed customer token that fails to verify. */
  const forgedCustomerToken = () => signCustomerToken('a-guessed-secret-that-is-not-the-one', 'c-1');

  it('20 bad tokens from one address, then the admin token and a valid customer token still succeed, and a 21st bad token gets 429', async () => {
    await listening(throttled(20), async (base) => {
      const customerToken = await signCustomerToken(CUSTOMER_JWT_SECRET, 'c-1');
      for (let i = 0; i < 20; i++) expect((await get(base, '/orders', bearer('x'))).status).toBe(401);
      expect((await get(base, '/orders', bearer(ADMIN_TOKEN))).status).toBe(LET_IN);
      expect((await get(base, '/ui/config', bearer(ADMIN_TOKEN))).status).toBe(LET_IN);
      expect((await get(base, '/orders', bearer(customerToken))).status).toBe(LET_IN);
      expect((await get(base, '/metrics', bearer(METRICS_TOKEN))).status).toBe(METRICS_SERVED);
      const refused = await get(base, '/orders', bearer('x'));
      expect(refused).toMatchObject({ status: 429, code: 'TOO_MANY_FAILED_ATTEMPTS' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Locked for guesses, still open to credentials that verify.
      expect((await get(base, '/orders', bearer(customerToken))).status).toBe(LET_IN);
    });
  });

  it(`past ${LIMIT} guesses every bearer route answers the next guess 429; another address keeps its own count`, async () => {
    await listening(throttled(), async (base) => {
      for (const path of ['/metrics', '/ui/config', '/orders'])
        expect((await get(base, path, bearer('guess'))).status).toBe(401);
      for (const path of ['/metrics', '/ui/config', '/orders'])
        expect((await get(base, path, bearer('guess'))).status).toBe(429);
      // Public routes are not bearer routes.
      expect((await get(base, '/openapi.json', {})).status).toBe(200);
      expect((await get(base, '/ui/config', bearer('guess'), '127.0.0.2')).status).toBe(401);
    });
  });

  it('a missing token, an expired customer token and a valid token on a route it does not open are refused, never counted', async () => {
    await listening(throttled(), async (base) => {
      const expired = await signCustomerToken(CUSTOMER_JWT_SECRET, 'c-1', { expiresInMs: -60_000 });
      const customerToken = await signCustomerToken(CUSTOMER_JWT_SECRET, 'c-1');
      for (let i = 0; i < 10 * LIMIT; i++) {
        expect((await get(base, '/orders', {})).status).toBe(401);
        expect(await get(base, '/orders', bearer(expired))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
        expect((await get(base, '/ui/config', bearer(customerToken))).status).toBe(401);
        expect((await get(base, '/orders', bearer(METRICS_TOKEN))).status).toBe(401);
      }
      // None of those was a guess: the allowance is whole.
      for (let i = 0; i < LIMIT; i++) expect((await get(base, '/orders', bearer('guess'))).status).toBe(401);
      expect((await get(base, '/orders', bearer('guess'))).status).toBe(429);
    });
  });

  it("guesses of the operator's token and of customer tokens are counted apart", async () => {
    await listening(throttled(), async (base) => {
      const forged = await forgedCustomerToken();
      for (let i = 0; i < LIMIT; i++) expect((await get(base, '/orders', bearer(forged))).status).toBe(401);
      expect((await get(base, '/orders', bearer(forged))).status).toBe(429);
      // An opaque token guesses the admin (or metrics) token: its own count, still whole.
      for (let i = 0; i < LIMIT; i++) expect((await get(base, '/metrics', bearer('guess'))).status).toBe(401);
      expect((await get(base, '/metrics', bearer('guess'))).status).toBe(429);
    });
  });

  it(`a burst of guesses sent at once gets exactly ${LIMIT} refusals, the rest 429; the right token amid them passes`, async () => {
    await listening(throttled(), async (base) => {
      // A customer's token is verified asynchronously (its signature off the main thread), so the
      // checks of guesses sent at once overlap.
      const forged = await forgedCustomerToken();
      const guesses = [...Array(40).keys()].map(() => get(base, '/orders', bearer(forged)));
      const right = get(base, '/ui/config', bearer(ADMIN_TOKEN));
      const statuses = (await Promise.all(guesses)).map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40 - LIMIT);
      expect((await right).status).toBe(LET_IN);
      expect((await get(base, '/ui/config', bearer(ADMIN_TOKEN))).status).toBe(LET_IN);
    });
  });

  it('turned off (0), refusals never turn into 429', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      for (let i = 0; i < 30; i++) expect((await get(base, '/ui/config', bearer('guess'))).status).toBe(401);
      expect((await get(base, '/ui/config', bearer(ADMIN_TOKEN))).status).toBe(LET_IN);
    });
  });
});

describe('behind a load balancer (TRUST_PROXY)', () => {
  const throttled = (trustProxy?: TrustProxy) =>
    appWithoutBackends({ faultsEnabled: false, authFailureLimit: { limit: LIMIT, windowMs: 60_000 }, trustProxy });
  /** What a balancer on this machine sends on: the client's address appended to X-Forwarded-For. */
  const via = (client: string, token: string, forwardedBefore?: string) => ({
    ...bearer(token),
    'x-forwarded-for': forwardedBefore === undefined ? client : `${forwardedBefore}, ${client}`,
  });
  const guessFrom = async (base: string, client: string, forwardedBefore?: string) => {
    for (let i = 0; i < LIMIT; i++)
      expect((await get(base, '/ui/config', via(client, 'guess', forwardedBefore))).status).toBe(401);
  };

  for (const [setting, trustProxy] of [
    ['one hop', 1],
    ["the balancer's address", ['127.0.0.1']],
    ["the balancer's network", ['127.0.0.0/8']],
  ] as const) {
    it(`trusting ${setting}, counts per client, and a client cannot write itself a fresh address`, async () => {
      await listening(throttled(trustProxy as TrustProxy), async (base) => {
        await guessFrom(base, '203.0.113.7');
        expect(await get(base, '/ui/config', via('203.0.113.7', 'guess'))).toMatchObject({ status: 429 });
        // Another client behind the same balancer keeps its own count.
        expect((await get(base, '/ui/config', via('203.0.113.8', 'guess'))).status).toBe(401);
        // A forged X-Forwarded-For in front of what the balancer appends changes nothing.
        expect(await get(base, '/ui/config', via('203.0.113.7', 'guess', '198.51.100.1'))).toMatchObject({
          status: 429,
        });
      });
    });
  }

  for (const [setting, trustProxy] of [
    ['off (the default)', undefined],
    ['trusting other addresses than the connection comes from', ['10.0.0.0/8']],
  ] as const) {
    it(`${setting}, X-Forwarded-For is not believed: clients share the balancer's count of guesses, and no one's valid token is refused`, async () => {
      await listening(throttled(trustProxy as TrustProxy | undefined), async (base) => {
        await guessFrom(base, '203.0.113.7');
        expect(await get(base, '/ui/config', via('203.0.113.8', 'guess'))).toMatchObject({ status: 429 });
        expect((await get(base, '/ui/config', via('203.0.113.8', ADMIN_TOKEN))).status).toBe(LET_IN);
      });
    });
  }
});
