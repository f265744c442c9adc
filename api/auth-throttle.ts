import type { RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { ApiError } from './errors.js';

/** Addresses tracked at once; past it the oldest go first, so a flood of addresses cannot exhaust memory. */
const MAX_TRACKED = 50_000;

/**
 * Guessing a bearer token is slowed per client address: once an address has had `limit` tokens
 * refused (401) within a window, every call of it that needs a token is refused with 429 until the
 * window ends, the right token included, so a guesser learns nothing more meanwhile. Only refusals
 * count: any number of good calls, however concurrent, never trips it. A refusal counts when the
 * check decides it, and the count is read again once a check has decided: guesses sent at once,
 * whose checks overlap (a customer's token is verified asynchronously), get `limit` answers, the
 * rest 429. IPv6 addresses count by /56 (express-rate-limit's ipKeyGenerator), so rotating within
 * one allocation does not reset the count. The address is Express's req.ip: the connection's,
 * unless `trust proxy` (TRUST_PROXY) names the load balancers in front, whose X-Forwarded-For then
 * gives the client's; without it every client behind a balancer shares the balancer's count.
 * Counts live in this process's memory.
 *
 * It wraps the credential check of each bearer route (api/mount-endpoints.ts).
 */
export function authFailureThrottle({
  limit,
  windowMs,
}: {
  limit: number;
  windowMs: number;
}): (check: RequestHandler) => RequestHandler {
  if (limit === 0) return (check) => check;
  const failures = new Map<string, { count: number; resetAt: number }>();
  const current = (key: string, now: number) => {
    const entry = failures.get(key);
    if (entry !== undefined && entry.resetAt <= now) failures.delete(key);
    return entry !== undefined && entry.resetAt > now ? entry : undefined;
  };
  /** The refusals counted so far in the address's window, this one included. */
  const recordFailure = (key: string): number => {
    const now = Date.now();
    const entry = current(key, now);
    if (entry !== undefined) return ++entry.count;
    if (failures.size >= MAX_TRACKED) {
      for (const [k, e] of failures) if (e.resetAt <= now) failures.delete(k);
      if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value!);
    }
    failures.set(key, { count: 1, resetAt: now + windowMs });
    return 1;
  };
  /** 429 once the address's window holds more refusals than `allowed`. */
  const refuseBeyond = (key: string, allowed: number, res: Response): void => {
    const now = Date.now();
    const entry = current(key, now);
    if (entry === undefined || entry.count <= allowed) return;
    const retryAfter = Math.ceil((entry.resetAt - now) / 1000);
    res.set('Retry-After', String(retryAfter));
    throw new ApiError(
      'TOO_MANY_FAILED_ATTEMPTS',
      `${limit} refused credentials from this address within ${windowMs / 1000} s; retry after ${retryAfter} s`,
    );
  };
  return (check) => async (req, res, next) => {
    const key = ipKeyGenerator(req.ip ?? '');
    refuseBeyond(key, limit - 1, res);
    let passed = false;
    try {
      await check(req, res, (err?: unknown) => {
        if (err !== undefined) throw err;
        passed = true;
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'UNAUTHORIZED')) throw err;
      // Past the allowance, a refusal says no more than any other call: 429.
      if (recordFailure(key) > limit) refuseBeyond(key, limit, res);
      throw err;
    }
    if (!passed) return;
    // Refusals decided while this check ran may have used the allowance up: then the right token too is 429.
    refuseBeyond(key, limit - 1, res);
    next();
  };
}
