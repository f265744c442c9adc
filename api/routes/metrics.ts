import { Router, type RequestHandler } from 'express';
import type { ApiMetrics } from '../../lib/metrics.js';

export function metricsRouter({ metrics }: { metrics: ApiMetrics }): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}

/** Times every request, labelled by the route pattern (never the raw path: ids would explode the label set). */
export function observeRequests({ metrics }: { metrics: ApiMetrics }): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
