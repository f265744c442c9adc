import { trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Flushes the spans still buffered. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry tracing for one process, registered globally (W3C trace context, async-local
 * context). Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then spans go there over OTLP/HTTP.
 * Tests pass an in-memory exporter instead.
 */
export function startTracing(
  serviceName: string,
  target: { otlpEndpoint: string } | { exporter: SpanExporter },
): Tracing {
  const resource = new Resource({ 'service.name': serviceName });
  const spanProcessor =
    'exporter' in target
      ? new SimpleSpanProcessor(target.exporter)
      : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${target.otlpEndpoint}/v1/traces` }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({
    contextManager: new AsyncLocalStorageContextManager().enable(),
    propagator: new W3CTraceContextPropagator(),
  });
  return {
    resource,
    spanProcessor,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
    },
  };
}
