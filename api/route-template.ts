import type { Request } from 'express';

/**
 * The route template a request matched, e.g. `/orders/:id`, never its raw path (ids would make every
 * metric label and span name of their own); `unmatched` when no route took it: a 404, or a request
 * refused before routing (a path parameter that does not percent-decode). Read once the response is
 * finished: Express sets it as the route runs.
 */
export function routeTemplateOf(req: Request): string {
  return (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
}
