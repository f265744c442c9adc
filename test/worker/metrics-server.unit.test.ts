import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../worker/metrics-server.js';
import type { Server } from 'node:http';

const ADMIN_TOKEN = 'worker-metrics-admin-token-0123456789abcdef';
const METRICS_TOKEN = 'worker-metrics-scraper-token-0123456789abcd';

/** The worker's /metrics takes the API's scraper credentials: METRICS_TOKEN, or the admin token. */
describe("the worker's /metrics", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = await startMetricsServer({
      port: 0,
      host: '127.0.0.1',
      registry: new Registry(),
      // Nothing listens there: the SDK's part is reported unavailable, the rest is served.
      sdkMetricsAddress: '127.0.0.1:1',
      adminToken: ADMIN_TOKEN,
      metricsToken: METRICS_TOKEN,
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });
  afterAll(() => {
    server?.close();
  });
  const get = (authorization?: string) => fetch(url, authorization ? { headers: { authorization } } : {});

  it('serves Prometheus with METRICS_TOKEN, and an operator with the admin token', async () => {
    for (const token of [METRICS_TOKEN, ADMIN_TOKEN]) {
      const res = await get(`Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# Temporal SDK metrics unavailable');
    }
  });

  it('refuses a scrape without a token, with a wrong one, or with another scheme: 401 in JSON, no figures', async () => {
    for (const authorization of [undefined, `Bearer ${METRICS_TOKEN}x`, 'Basic b3BzOm9wcw==']) {
      const res = await get(authorization);
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await res.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
    }
  });

  it('unset METRICS_TOKEN: the admin token alone opens it', async () => {
    const adminOnly = await startMetricsServer({
      port: 0,
      host: '127.0.0.1',
      registry: new Registry(),
      sdkMetricsAddress: '127.0.0.1:1',
      adminToken: ADMIN_TOKEN,
      metricsToken: undefined,
    });
    try {
      const at = `http://127.0.0.1:${(adminOnly.address() as AddressInfo).port}/metrics`;
      expect((await fetch(at, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
      expect((await fetch(at, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(401);
    } finally {
      adminOnly.close();
    }
  });
});
