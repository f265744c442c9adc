import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { routeTemplateOf } from './route-template.js';

/**
 * One server span per request, named after its route template (`POST /orders/:id/cancel`, `GET
 * unmatched`), never its raw path; the Temporal client's interceptor carries it on into the signal
 * or update, and the worker's into the activities. A caller's W3C `traceparent` is continued only
 * with `trustTraceparent` (config: TRUST_TRACEPARENT), for callers of our own: otherwise anyone
 * could hang their spans into our traces, or pick our trace ids and sampling decision, so each
 * request starts a trace of its own. Without a registered tracer provider (tracing off) the spans
 * are no-ops.
 */
export function traceRequests({ trustTraceparent }: { trustTraceparent: boolean }): RequestHandler {
  const tracer = trace.getTracer('order-api');
  return (req, res, next) => {
    const parent = trustTraceparent ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
    // The route is known only once the router has run: until then the span is unmatched.
    const span = tracer.startSpan(
      `${req.method} unmatched`,
      { kind: SpanKind.SERVER, attributes: { 'http.method': req.method } },
      parent,
    );
    const active = trace.setSpan(parent, span);
    res.on('finish', () => {
      const route = routeTemplateOf(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    // Body parsers resume the chain from stream events: bind the request so they stay in this trace.
    context.bind(active, req);
    context.with(active, next);
  };
}
