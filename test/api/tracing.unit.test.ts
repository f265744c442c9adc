import { randomBytes, randomUUID } from 'node:crypto';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../lib/tracing.js';
import { appWithoutBackends, listening } from '../helpers/app-without-backends.js';

/**
 * The API's server spans: named by the route a request matched, never its raw path, and continuing
 * a caller's `traceparent` only when TRUST_TRACEPARENT says so. No backend is reached: the requests
 * here are refused or answered before one would be.
 */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
beforeAll(() => {
  tracing = startTracing('order-test', { exporter });
});
afterEach(() => exporter.reset());
afterAll(async () => {
  await tracing?.shutdown();
});

/** The finished server spans of these calls, in order: each call's answer is read before the next is sent. */
async function spansOf(trustTraceparent: boolean, calls: Array<[string, string, Record<string, string>?]>) {
  const app = appWithoutBackends({ faultsEnabled: false, trustTraceparent });
  await listening(app, async (base) => {
    for (const [method, path, headers] of calls) await (await fetch(`${base}${path}`, { method, headers })).text();
  });
  return exporter.getFinishedSpans();
}

describe('server spans', () => {
  it('are named by the route template, refusals and 404s included, never by the raw path', async () => {
    const id = randomUUID();
    const spans = await spansOf(false, [
      ['GET', `/orders/${id}`], // 401: refused by the route's access check
      ['POST', `/orders/${id}/cancel`],
      ['DELETE', `/orders/${id}`], // 405: the path does not take the method
      ['GET', `/no/such/${id}`], // 404: no route
      ['GET', '/orders/%ZZ'], // 400: refused before routing, the parameter does not decode
    ]);
    expect(spans.map((s) => [s.name, s.attributes['http.status_code']])).toEqual([
      ['GET /orders/:id', 401],
      ['POST /orders/:id/cancel', 401],
      ['DELETE /orders/:id', 405],
      ['GET unmatched', 404],
      ['GET unmatched', 400],
    ]);
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toContain(id);
  });
});

describe("a caller's traceparent", () => {
  const traceId = randomBytes(16).toString('hex');
  const parentSpanId = randomBytes(8).toString('hex');
  const traceparent = `00-${traceId}-${parentSpanId}-01`;

  it('is ignored by default: the request starts a trace of its own', async () => {
    const [span] = await spansOf(false, [['GET', '/healthz-nowhere', { traceparent }]]);
    expect(span!.spanContext().traceId).not.toBe(traceId);
    expect(span!.parentSpanId).toBeUndefined();
  });

  it('is continued with TRUST_TRACEPARENT', async () => {
    const [span] = await spansOf(true, [['GET', '/healthz-nowhere', { traceparent }]]);
    expect(span!.spanContext().traceId).toBe(traceId);
    expect(span!.parentSpanId).toBe(parentSpanId);
  });
});
