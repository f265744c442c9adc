import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { accessCheck, callerOf, type Credentials } from './auth.js';
import { authFailureThrottle } from './auth-throttle.js';
import {
  BEARER_ACCESS,
  Reply,
  SIGNED_BODY_ACCESS,
  type Endpoint,
  type Method,
  type RateLimitBudget,
} from './endpoint.js';
import { ApiError, parseInput } from './errors.js';
import type { WebUiCors } from './cors.js';
import { orOperatorSession, type OperatorSessions } from './operator-session.js';
import { perCustomerRateLimit } from './rate-limit.js';
import { jsonBody, jsonBodyUpTo } from './request-body.js';

export interface MountDeps extends Credentials {
  /** The operator session cookie, where an endpoint takes it (operatorSession). */
  operatorSessions: OperatorSessions;
  /** The Web UI's CORS, where an endpoint is called from there (crossOrigin). */
  webUiCors: WebUiCors;
  /** Calls per customer per window of the endpoints of the `placements` budget; 0: no limit. */
  ordersRateLimit: { limit: number; windowMs: number };
  /** Calls per customer per window of the endpoints of the `reads` budget; 0: no limit. */
  readsRateLimit: { limit: number; windowMs: number };
  /** Guessed bearer tokens per client address per window before further guesses are 429; 0: no limit. */
  authFailureLimit: { limit: number; windowMs: number };
}

/**
 * The router of these endpoints. Each gets, in this order: the Web UI's CORS headers if it is called
 * from there, `Cache-Control: no-store` unless it is public, the check its access calls for (taking
 * the operator session too where it says so, inside the throttle of guessed bearer tokens if it takes
 * one; a public endpoint that takes a token optionally checks one only when it is sent), its rate
 * limit if it has one, the JSON body parser if it takes a body (a webhook's check has read
 * its body already), the validation of every input part it declares, and its handler. A method that
 * none of a path's endpoints declares answers 405 with `Allow`, before anything is checked or read.
 */
export function mountEndpoints(endpoints: readonly Endpoint[], deps: MountDeps): Router {
  const router = Router();
  const throttle = authFailureThrottle(deps.authFailureLimit); // one count per address across every route
  // One count per budget, shared by its endpoints: a customer's reads never use up their placements.
  const rateLimits: Record<RateLimitBudget, RequestHandler> = {
    placements: perCustomerRateLimit(deps.ordersRateLimit),
    reads: perCustomerRateLimit(deps.readsRateLimit),
  };
  for (const [path, onPath] of byPath(endpoints)) {
    const route = router.route(path);
    for (const endpoint of onPath) route[endpoint.method](...stepsOf(endpoint, deps, throttle, rateLimits));
    const methods = onPath.map((e) => e.method);
    // A CORS preflight is an OPTIONS the path does not take as a method of its own: answered before the 405.
    if (onPath.some((e) => e.crossOrigin)) route.all(deps.webUiCors.preflight(methods));
    route.all(methodNotAllowed(methods));
  }
  return router;
}

function byPath(endpoints: readonly Endpoint[]): Map<string, Endpoint[]> {
  const paths = new Map<string, Endpoint[]>();
  for (const endpoint of endpoints) paths.set(endpoint.path, [...(paths.get(endpoint.path) ?? []), endpoint]);
  return paths;
}

function stepsOf(
  endpoint: Endpoint,
  deps: MountDeps,
  throttle: (check: RequestHandler) => RequestHandler,
  rateLimits: Record<RateLimitBudget, RequestHandler>,
): RequestHandler[] {
  const withSession = (check: RequestHandler) =>
    endpoint.operatorSession ? orOperatorSession(check, deps.operatorSessions) : check;
  const checks =
    endpoint.access === 'public' && endpoint.tokenOptional
      ? accessCheck('customerOrOperator', deps).map((check) => ifAuthorizationSent(throttle(check)))
      : accessCheck(endpoint.access, deps).map((check) =>
          BEARER_ACCESS.includes(endpoint.access) ? throttle(withSession(check)) : withSession(check),
        );
  return [
    ...(endpoint.crossOrigin ? [deps.webUiCors.headers] : []),
    ...(endpoint.access === 'public' ? [] : [noStore]),
    ...checks,
    ...(endpoint.rateLimit ? [rateLimits[endpoint.rateLimit]] : []),
    ...(endpoint.body && !SIGNED_BODY_ACCESS.includes(endpoint.access)
      ? [endpoint.bodyLimitKb ? jsonBodyUpTo(endpoint.bodyLimitKb) : jsonBody]
      : []),
    handle(endpoint),
  ];
}

function handle(endpoint: Endpoint): RequestHandler {
  return async (req, res) => {
    const input = {
      params: endpoint.params && parseInput(endpoint.params, req.params),
      query: endpoint.query && parseInput(endpoint.query, req.query),
      headers: endpoint.headers && parseInput(endpoint.headers, headersNamedIn(endpoint.headers, req)),
      body: endpoint.body && parseInput(endpoint.body, req.body),
      caller: callerOf(res),
      localPort: req.socket.localPort ?? 0,
    };
    send(res, endpoint, await endpoint.handler(input, undefined));
  };
}

/** The request's values of the headers the schema names, under the names it spells them with. */
function headersNamedIn(schema: z.ZodObject, req: Request): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(schema.shape).map((name) => [name, req.get(name)]));
}

function send(res: Response, endpoint: Endpoint, result: unknown): void {
  const reply = result instanceof Reply ? result : new Reply(result);
  res.status(reply.options.status ?? endpoint.success.status);
  if (reply.options.headers) res.set(reply.options.headers);
  const contentType = reply.options.contentType ?? endpoint.success.contentType;
  if (reply.body === undefined) res.end();
  else if (contentType) res.type(contentType).send(reply.body);
  else res.json(reply.body);
}

/** What needs credentials to read must not be kept by a browser or a shared cache, its refusals included. */
const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};

/**
 * `check` for a request that sends `Authorization`; one that sends none goes on anonymous. The answer
 * then depends on who asks: caches key it by the header, and keep none given to a token.
 */
function ifAuthorizationSent(check: RequestHandler): RequestHandler {
  return (req, res, next) => {
    res.vary('Authorization');
    if (req.get('authorization') === undefined) {
      next();
      return;
    }
    res.set('Cache-Control', 'no-store');
    return check(req, res, next);
  };
}

/** HEAD is answered wherever GET is (Express runs the GET handler without sending the body). */
function methodNotAllowed(declared: Method[]): RequestHandler {
  const allowed = [...new Set(declared.flatMap((m) => (m === 'get' ? ['GET', 'HEAD'] : [m.toUpperCase()])))].sort();
  const allow = allowed.join(', ');
  return (req, res) => {
    res.set('Allow', allow);
    throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; this path takes ${allow}`, {
      allowed,
    });
  };
}
