import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';

describe('fault injection without FAULTS_ENABLED', () => {
  it('answers 404 for both endpoints and for the dev simulate-payment endpoint, touching neither the database nor Temporal', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const put = await fetch(`${base}/admin/faults/invoice`, { method: 'PUT', headers, body: '{"failNext":1}' });
      const del = await fetch(`${base}/admin/faults/invoice`, { method: 'DELETE', headers });
      const simulate = await fetch(
        `${base}/dev/orders/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/simulate-payment`,
        { method: 'POST', headers },
      );
      expect([put.status, del.status, simulate.status]).toEqual([404, 404, 404]);
      expect(await put.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    });
  });
});
