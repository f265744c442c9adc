import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { callerOf } from './auth.js';
import { ApiError } from './errors.js';

/**
 * At most `limit` calls per customer per window (0: no limit), once the access check has
 * established the caller (api/auth.ts). Keyed by the customer the token proves rather than by IP
 * address: customers behind one NAT or proxy do not share a budget, a bot cannot reset its budget
 * by changing address, and no proxy configuration (`trust proxy`) is needed to see the client's
 * address. Operators are not limited. Counts live in this process's memory: with N API processes a
 * customer gets up to N × limit.
 */
export function perCustomerRateLimit({ limit, windowMs }: { limit: number; windowMs: number }): RequestHandler {
  if (limit === 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs,
    limit,
    standardHeaders: 'draft-8', // RateLimit and RateLimit-Policy; Retry-After when refused
    legacyHeaders: false,
    skip: (_req, res) => callerOf(res)?.role !== 'customer',
    keyGenerator: (_req, res) => {
      const caller = callerOf(res);
      return caller?.role === 'customer' ? caller.customerId : 'not-a-customer';
    },
    handler: (_req, _res, next) => {
      next(
        new ApiError(
          'RATE_LIMITED',
          `at most ${limit} calls per ${windowMs / 1000} s per customer; retry after Retry-After seconds`,
        ),
      );
    },
  });
}
