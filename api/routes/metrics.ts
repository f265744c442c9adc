import type { z } from 'zod';
import { Reply, type Handler } from '../endpoint.js';
import type { ApiMetrics } from '../metrics.js';

/** Prometheus scrapes with the admin token: business figures are for operators, not for anyone who asks. */
export const metricsText: Handler<Record<never, never>, 'operator', { metrics: ApiMetrics }, z.ZodString> = async (
  _input,
  { metrics },
) => new Reply(await metrics.registry.metrics(), { contentType: metrics.registry.contentType });
