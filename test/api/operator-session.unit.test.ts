import { describe, expect, it } from 'vitest';
import { operatorSessions } from '../../api/operator-session.js';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';

/**
 * The orders page's sign-in: the admin token, sent once, buys an HttpOnly, SameSite=Strict, signed
 * and expiring cookie that opens the browser's calls (here the codec endpoints, which need no
 * backend) and nothing else. Past the credential check GET /orders and /ui/config touch a backend,
 * which this app refuses: 500 means "let in".
 */
const LET_IN = 500;
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const json = { 'content-type': 'application/json' };
const EMPTY = JSON.stringify({ payloads: [] });

async function signIn(base: string): Promise<{ cookie: string; setCookie: string; body: any }> {
  const res = await fetch(`${base}/operator/session`, { method: 'POST', headers: bearer });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie')!;
  return { cookie: setCookie.split(';')[0]!, setCookie, body: await res.json() };
}

describe('POST /operator/session', () => {
  it('trades the admin token for an HttpOnly, SameSite=Strict, Secure cookie that expires after the TTL', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const before = Date.now();
      const { setCookie, body } = await signIn(base);
      const after = Date.now();
      expect(setCookie).toMatch(
        /^operator_session=v1\.\d+\.[\w-]+; Max-Age=28800; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
      );
      const expiresAt = Date.parse(body.expiresAt);
      expect(expiresAt).toBeGreaterThan(before + 8 * 3_600_000 - 1_000); // whole seconds
      expect(expiresAt).toBeLessThanOrEqual(after + 8 * 3_600_000);
    });
  });

  it('refuses another token, and sets no cookie', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const res = await fetch(`${base}/operator/session`, { method: 'POST', headers: { authorization: 'Bearer x' } });
      expect(res.status).toBe(401);
      expect(res.headers.get('set-cookie')).toBeNull();
    });
  });
});

describe('the operator session cookie', () => {
  it("opens the page's reads and the codec endpoints, and no other operator call", async () => {
    await listening(appWithoutBackends({ faultsEnabled: true }), async (base) => {
      const { cookie } = await signIn(base);
      const asPage = { cookie };
      expect((await fetch(`${base}/orders`, { headers: asPage })).status).toBe(LET_IN);
      expect((await fetch(`${base}/ui/config`, { headers: asPage })).status).toBe(LET_IN);
      const decoded = await fetch(`${base}/codec/decode`, {
        method: 'POST',
        headers: { ...asPage, ...json },
        body: EMPTY,
      });
      expect(decoded.status).toBe(200);
      expect((await fetch(`${base}/coupons/WELCOME`, { headers: asPage })).status).toBe(401);
      const put = { method: 'PUT', headers: { ...asPage, ...json }, body: JSON.stringify({ discountCents: 1 }) };
      expect((await fetch(`${base}/coupons/WELCOME`, put)).status).toBe(401);
      expect((await fetch(`${base}/metrics`, { headers: asPage })).status).toBe(401);
    });
  });

  it('CSRF: a call with it that changes something must be JSON, which no form can send', async () => {
    await listening(appWithoutBackends({ faultsEnabled: true }), async (base) => {
      const { cookie } = await signIn(base);
      const formPost = { method: 'POST', headers: { cookie, 'content-type': 'text/plain' }, body: EMPTY };
      const refused = await fetch(`${base}/codec/decode`, formPost);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as any).error.message).toMatch(/Content-Type: application\/json/);
      const pay = `${base}/dev/orders/00000000-0000-4000-8000-000000000000/simulate-payment`;
      expect((await fetch(pay, { method: 'POST', headers: { cookie } })).status).toBe(401);
      expect((await fetch(pay, { method: 'POST', headers: { cookie, ...json } })).status).toBe(LET_IN);
    });
  });

  it('is refused when forged, tampered with or expired', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const { cookie } = await signIn(base);
      const [name, value] = cookie.split('=') as [string, string];
      const [v, expiry, mac] = value.split('.');
      const decode = (c: string) =>
        fetch(`${base}/codec/decode`, { method: 'POST', headers: { cookie: c, ...json }, body: EMPTY });
      expect((await decode(`${name}=${v}.${Number(expiry) + 3600}.${mac}`)).status).toBe(401); // a longer life
      expect((await decode(`${name}=${v}.${expiry}.${'A'.repeat(mac!.length)}`)).status).toBe(401);
      expect((await decode(`${name}=garbage`)).status).toBe(401);
      // Signed with the same admin token, but over: the app's own key makes it, its clock refuses it.
      const old = operatorSessions(ADMIN_TOKEN, { ttlMs: 60_000, secureCookie: true }).issue(Date.now() - 120_000);
      const expired = await decode(old.setCookie.split(';')[0]!);
      expect(expired.status).toBe(401);
      expect(((await expired.json()) as any).error.message).toMatch(/expired/);
    });
  });

  it('ends with the admin token: a cookie signed under another token is refused', () => {
    const { setCookie } = operatorSessions('old-token', { ttlMs: 60_000, secureCookie: true }).issue(Date.now());
    const afterRotation = operatorSessions('new-token', { ttlMs: 60_000, secureCookie: true });
    expect(afterRotation.check(setCookie.split(';')[0], Date.now())).toBe('forged');
  });

  it('a refused cookie counts as a refused credential for the throttle', async () => {
    const app = appWithoutBackends({ faultsEnabled: false, authFailureLimit: { limit: 2, windowMs: 60_000 } });
    await listening(app, async (base) => {
      const forged = { method: 'POST', headers: { cookie: 'operator_session=v1.1.x', ...json }, body: EMPTY };
      expect((await fetch(`${base}/codec/decode`, forged)).status).toBe(401);
      expect((await fetch(`${base}/codec/decode`, forged)).status).toBe(401);
      expect((await fetch(`${base}/codec/decode`, forged)).status).toBe(429);
    });
  });

  it('DELETE /operator/session removes it, without a credential', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const res = await fetch(`${base}/operator/session`, { method: 'DELETE' });
      expect(res.status).toBe(204);
      expect(res.headers.get('set-cookie')).toMatch(
        /^operator_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict/,
      );
    });
  });
});
