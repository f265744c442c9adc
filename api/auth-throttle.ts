import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { ApiError } from './errors.js';

/** Addresses tracked at once; past it the oldest go first, so a flood of addresses cannot exhaust memory. */
const MAX_TRACKED = 50_000;

/**
 * Guessing a bearer token is slowed per client address: once an address has had `limit` tokens
 * refused (401) within a window, every call of it that needs a token is refused with 429 until the
 * window ends, the right token included, so a guesser learns nothing more meanwhile. Only refusals
 * count: any number of good calls, however concurrent, never trips it. IPv6 addresses count by /56
 * (express-rate-limit's ipKeyGenerator), so rotating within one allocation does not reset the count.
 * The address is Express's req.ip: the connection's, unless `trust proxy` (TRUST_PROXY) names the
 * load balancers in front, whose X-Forwarded-For then gives the client's; without it every client
 * behind a balancer shares the balancer's count. Counts live in this process's memory.
 */
export function authFailureThrottle({ limit, windowMs }: { limit: number; windowMs: number }): RequestHandler {
  if (limit === 0) return (_req, _res, next) => next();
  const failures = new Map<string, { count: number; resetAt: number }>();
  const current = (key: string, now: number) => {
    const entry = failures.get(key);
    if (entry !== undefined && entry.resetAt <= now) failures.delete(key);
    return entry !== undefined && entry.resetAt > now ? entry : undefined;
  };
  const recordFailure = (key: string) => {
    const now = Date.now();
    const entry = current(key, now);
    if (entry !== undefined) {
      entry.count++;
      return;
    }
    if (failures.size >= MAX_TRACKED) {
      for (const [k, e] of failures) if (e.resetAt <= now) failures.delete(k);
      if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value!);
    }
    failures.set(key, { count: 1, resetAt: now + windowMs });
  };
  return (req, res, next) => {
    const key = ipKeyGenerator(req.ip ?? '');
    const now = Date.now();
    const entry = current(key, now);
    if (entry !== undefined && entry.count >= limit) {
      const retryAfter = Math.ceil((entry.resetAt - now) / 1000);
      res.set('Retry-After', String(retryAfter));
      throw new ApiError(
        'TOO_MANY_FAILED_ATTEMPTS',
        `${limit} refused credentials from this address within ${windowMs / 1000} s; retry after ${retryAfter} s`,
      );
    }
    res.on('finish', () => {
      if (res.statusCode === 401) recordFailure(key);
    });
    next();
  };
}
