import type { z } from 'zod';
import { Reply, type Handler } from '../endpoint.js';
import type { ApiMetrics } from '../metrics.js';

/** Prometheus scrapes with METRICS_TOKEN: business figures are for operators and their scraper, not for anyone who asks. */
export const metricsText: Handler<Record<never, never>, 'scraper', { metrics: ApiMetrics }, z.ZodString> = async (
  _input,
  { metrics },
) => new Reply(await metrics.registry.metrics(), { contentType: metrics.registry.contentType });
