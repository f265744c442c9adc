import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';

interface ErrorBody {
  error: { code: string };
}

const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'];
const ORDER_ID = '00000000-0000-4000-8000-000000000000';

/** Every path of the document with a concrete value for each parameter, and the methods it declares. */
function declaredPaths(document: { paths: Record<string, Record<string, unknown>> }) {
  return Object.entries(document.paths).map(([path, operations]) => ({
    url: path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'id' ? ORDER_ID : 'invoice')),
    declared: Object.keys(operations).map((m) => m.toUpperCase()),
  }));
}

describe('a method a path does not take', () => {
  it('answers 405 with Allow and the contract error, before any check, touching neither the database nor Temporal', async () => {
    const app = appWithoutBackends({ faultsEnabled: true });
    await listening(app, async (base) => {
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as Parameters<typeof declaredPaths>[0];
      let checked = 0;
      for (const { url, declared } of declaredPaths(document)) {
        // HEAD is answered wherever GET is.
        const taken = declared.includes('GET') ? [...declared, 'HEAD'] : declared;
        for (const method of METHODS.filter((m) => !taken.includes(m))) {
          // With a body (where fetch sends one) and a valid token: neither is looked at.
          const res = await fetch(base + url, {
            method,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            ...(method === 'HEAD' || method === 'GET' ? {} : { body: '{"failNext": 1}' }),
          });
          const where = `${method} ${url}`;
          expect(res.status, where).toBe(405);
          expect(res.headers.get('allow'), where).toBe([...taken].sort().join(', '));
          if (method === 'HEAD') continue;
          expect(await res.json(), where).toEqual({
            error: {
              code: 'METHOD_NOT_ALLOWED',
              message: `${method} is not allowed here; this path takes ${[...taken].sort().join(', ')}`,
              details: { allowed: [...taken].sort() },
            },
          });
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(50); // every path of the document, several methods each
    });
  });

  it('lists every method the path takes: DELETE /orders is 405 with Allow: GET, HEAD, POST', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const res = await fetch(`${base}/orders`, { method: 'DELETE' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(((await res.json()) as ErrorBody).error.code).toBe('METHOD_NOT_ALLOWED');
    });
  });

  it('leaves declared methods, HEAD of a GET, and unknown paths alone', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const declared = await fetch(`${base}/orders/${ORDER_ID}`, { method: 'GET' });
      expect([declared.status, ((await declared.json()) as ErrorBody).error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect((await fetch(`${base}/openapi.json`, { method: 'HEAD' })).status).toBe(200);
      const unknown = await fetch(`${base}/nowhere`, { method: 'DELETE' });
      expect([unknown.status, unknown.headers.get('allow'), ((await unknown.json()) as ErrorBody).error.code]).toEqual([
        404,
        null,
        'NOT_FOUND',
      ]);
      // Dev-only paths are not declared without FAULTS_ENABLED: 404, not 405.
      expect((await fetch(`${base}/admin/faults/invoice`, { method: 'PATCH' })).status).toBe(404);
    });
  });
});
