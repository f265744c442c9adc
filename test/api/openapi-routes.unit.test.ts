import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import { describe, expect, it } from 'vitest';
import { JSON_BODY_LIMIT_KB, WEBHOOK_BODY_LIMIT_KB } from '../../api/request-body.js';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';

/** `GET /orders/:id` for every route the app's routers mount (Express 5: app.router.stack). */
function mountedRoutes(app: Express): string[] {
  const routes: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        expect(typeof layer.route.path, 'a route path the document can name').toBe('string');
        // `_all`: the 405 answer for the methods the path does not take, not a route of its own.
        for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all'))
          routes.push(`${method.toUpperCase()} ${layer.route.path}`);
      } else if (layer.handle.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return routes.sort();
}
interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** `GET /orders/:id` for every operation of the document, its `{id}` written back the Express way. */
function documentedRoutes(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    )
    .sort();
}

async function fetchDocument(app: Express): Promise<{ status: number; contentType: string | null; body: any }> {
  return listening(app, async (base) => {
    const res = await fetch(`${base}/openapi.json`); // no credentials: public
    return { status: res.status, contentType: res.headers.get('content-type'), body: await res.json() };
  });
}

describe('GET /openapi.json', () => {
  it.each([true, false])('names exactly the routes the app mounts (FAULTS_ENABLED %s)', async (faultsEnabled) => {
    const app = appWithoutBackends({ faultsEnabled });
    const served = await fetchDocument(app);
    expect(served.status).toBe(200);
    expect(served.contentType).toMatch(/^application\/json/);
    const mounted = mountedRoutes(app);
    expect(mounted).toContain('GET /orders/:id'); // the walk found the routers' routes at all
    expect(mounted.includes('PUT /admin/faults/:service')).toBe(faultsEnabled);
    expect(documentedRoutes(served.body)).toEqual(mounted);
  });

  it.each([true, false])(
    "names Stripe's webhook exactly when its signing secret is configured (%s)",
    async (stripe) => {
      const app = appWithoutBackends({ faultsEnabled: false, ...(stripe ? { stripeWebhookSecret: 'whsec_s' } : {}) });
      const mounted = mountedRoutes(app);
      expect(mounted.includes('POST /webhooks/stripe')).toBe(stripe);
      expect(documentedRoutes((await fetchDocument(app)).body)).toEqual(mounted);
    },
  );

  it('is a valid OpenAPI 3.1 document', async () => {
    const { body } = await fetchDocument(appWithoutBackends({ faultsEnabled: true, stripeWebhookSecret: 'whsec_s' }));
    const result = await new Validator().validate(body);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(body.openapi).toMatch(/^3\.1\./);
  });

  it('states the body limits and the trim before length checks', async () => {
    const { body: document } = await fetchDocument(appWithoutBackends({ faultsEnabled: false }));
    const bodyOf = (path: string, method: string) => document.paths[path][method].requestBody;
    expect(bodyOf('/orders', 'post').description).toContain(`at most ${JSON_BODY_LIMIT_KB} kB`);
    expect(bodyOf('/payments/callback', 'post').description).toContain(`at most ${WEBHOOK_BODY_LIMIT_KB} kB`);
    const withStripe = (
      await fetchDocument(appWithoutBackends({ faultsEnabled: false, stripeWebhookSecret: 'whsec_s' }))
    ).body;
    expect(withStripe.paths['/webhooks/stripe'].post.requestBody.description).toContain(
      `at most ${WEBHOOK_BODY_LIMIT_KB} kB, read raw`,
    );
    const product = bodyOf('/products/{sku}', 'put').content['application/json'].schema.properties;
    expect(product.name.description).toMatch(/trimmed first/);
  });

  it('states that each sku may appear once per order, which the API enforces', async () => {
    const app = appWithoutBackends({ faultsEnabled: false });
    const { body: document } = await fetchDocument(app);
    const items = document.paths['/orders'].post.requestBody.content['application/json'].schema.properties.items;
    expect(items.uniqueItems).toBe(true);
    expect(items.description).toMatch(/each sku at most once per order/);

    const refused = await listening(app, async (base) => {
      const res = await fetch(`${base}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          customerId: 'c-1',
          items: [
            { sku: 'TEA', quantity: 1 },
            { sku: 'TEA', quantity: 2 },
          ],
        }),
      });
      return { status: res.status, body: await res.json() };
    });
    expect(refused).toEqual({
      status: 400,
      body: {
        error: {
          code: 'VALIDATION_FAILED',
          message: expect.any(String),
          details: { issues: [{ path: 'items', message: 'each sku may appear once' }] },
        },
      },
    });
  });
});
