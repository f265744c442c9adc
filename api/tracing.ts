import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';

/**
 * One server span per request, continuing a caller's W3C trace context; the Temporal client's
 * interceptor carries it on into the signal or update, and the worker's into the activities.
 * Without a registered tracer provider (tracing off) the spans are no-ops.
 */
export function traceRequests(): RequestHandler {
  const tracer = trace.getTracer('order-api');
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      `${req.method} ${req.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.method': req.method } },
      parent,
    );
    const active = trace.setSpan(parent, span);
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      if (route) span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    // Body parsers resume the chain from stream events: bind the request so they stay in this trace.
    context.bind(active, req);
    context.with(active, next);
  };
}
