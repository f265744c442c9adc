import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { createLogger } from '../../lib/logger.js';
import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';

describe('fault injection without FAULTS_ENABLED', () => {
  it('answers 404 for both endpoints and for the dev simulate-payment endpoint, touching neither the database nor Temporal', async () => {
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('must not be used');
        },
      },
    );
    const app = createApp({
      db: untouchable as Db,
      temporal: untouchable as Client,
      taskQueue: 'q',
      adminToken: 't',
      webhookSecret: 's',
      customerTokens: { algorithm: 'HS256', secret: 's'.repeat(32), maxAgeSeconds: 3600 },
      orderIdSecret: 's'.repeat(32),
      ordersRateLimit: { limit: 0, windowMs: 60_000 },
      authFailureLimit: { limit: 0, windowMs: 60_000 },
      temporalUiUrl: 'http://localhost:8233',
      logger: createLogger('test', 'silent'),
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const headers = { authorization: 'Bearer t', 'content-type': 'application/json' };
      const put = await fetch(`${base}/admin/faults/invoice`, { method: 'PUT', headers, body: '{"failNext":1}' });
      const del = await fetch(`${base}/admin/faults/invoice`, { method: 'DELETE', headers });
      const simulate = await fetch(
        `${base}/dev/orders/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/simulate-payment`,
        { method: 'POST', headers },
      );
      expect([put.status, del.status, simulate.status]).toEqual([404, 404, 404]);
      expect(await put.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    } finally {
      server.close();
    }
  });
});
