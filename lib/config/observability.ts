import { z } from 'zod';
import { port } from './env.js';

/** Logs, metrics and traces. */
export const ObservabilitySchema = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Additions to the contract (docs/operations.md, "Configuration"): operability.
  WORKER_METRICS_PORT: port.default(9464),
  TEMPORAL_SDK_METRICS_ADDRESS: z
    .string()
    .regex(/^[\w.-]+:\d{1,5}$/, 'must be host:port')
    .default('127.0.0.1:9465'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  // Addition (docs/operations.md, "Traces"): whether the API continues a caller's W3C traceparent.
  TRUST_TRACEPARENT: z.enum(['true', 'false']).default('false'),
});

export interface ObservabilitySettings {
  logLevel: z.infer<typeof ObservabilitySchema>['LOG_LEVEL'];
  /** The worker's Prometheus /metrics port, and where the SDK's own exporter binds (merged into it). */
  workerMetricsPort: number;
  sdkMetricsAddress: string;
  /** OTLP/HTTP endpoint for traces; unset: tracing is off. */
  otlpEndpoint: string | undefined;
  /**
   * Whether the API continues the trace a request's `traceparent` names; false (the default): every
   * request starts a trace of its own, so a client can neither join our traces nor choose their ids.
   */
  trustTraceparent: boolean;
}

export function observabilitySettings(e: z.infer<typeof ObservabilitySchema>): ObservabilitySettings {
  return {
    logLevel: e.LOG_LEVEL,
    workerMetricsPort: e.WORKER_METRICS_PORT,
    sdkMetricsAddress: e.TEMPORAL_SDK_METRICS_ADDRESS,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, ''),
    trustTraceparent: e.TRUST_TRACEPARENT === 'true',
  };
}
