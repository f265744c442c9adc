import type { ApiHandler } from '../endpoint-table.js';
import { Reply } from '../endpoint.js';
import type { ApiMetrics } from '../metrics.js';

/** Prometheus scrapes with METRICS_TOKEN: business figures are for operators and their scraper, not for anyone who asks. */
export const metricsText: ApiHandler<'metricsText', { metrics: ApiMetrics }> = async (_input, { metrics }) =>
  new Reply(await metrics.registry.metrics(), { contentType: metrics.registry.contentType });
