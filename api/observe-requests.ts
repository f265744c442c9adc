import type { RequestHandler } from 'express';
import { orderLogFields } from '../domain/messages.js';
import type { Logger } from '../lib/logger.js';
import type { ApiMetrics } from './metrics.js';
import { routeTemplateOf } from './route-template.js';

/**
 * Times every request, labelled by the route pattern (never the raw path: ids would explode the
 * label set), and writes one access-log line; a request about an order names its orderId and
 * workflowId. A path's `:id` is always an order's (api/endpoint.ts).
 */
export function observeRequests({ metrics, logger }: { metrics: ApiMetrics; logger: Logger }): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = routeTemplateOf(req);
      const seconds = stop({ method: req.method, route, status: String(res.statusCode) });
      const orderId = route.includes('/:id') ? (req.params as { id?: string }).id : undefined;
      logger.info(
        {
          method: req.method,
          route,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
          ...(orderId ? orderLogFields(orderId) : {}),
        },
        'request',
      );
    });
    next();
  };
}
