import type { RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { CredentialRefused, type GuessedCredential } from './auth.js';
import { ApiError } from './errors.js';

/** Addresses tracked at once per kind of guess; past it the oldest go first, so a flood of addresses cannot exhaust memory. */
const MAX_TRACKED = 50_000;

/**
 * Guessing a bearer token is slowed per client address: once an address has sent `limit` tokens
 * within a window that fail to verify, its further guesses are answered 429 until the window ends.
 *
 * - A credential that verifies always passes, whatever its address has sent: behind a load balancer
 *   (TRUST_PROXY unset) every client shares one address, so refusing good credentials there would
 *   let anyone lock every operator and customer out with a handful of requests.
 * - Only guesses count: a request without a token, a customer's expired token (its signature holds)
 *   and a valid token on a route it does not open are refused (401) but never counted.
 * - Guesses of the operator's (and metrics) token and of customer tokens are counted apart, so a
 *   storm of broken customer tokens does not hide, or trip on, the guessing of the admin token.
 *
 * The tokens themselves are what stops a guesser (the admin and metrics tokens need 32+ characters in
 * production, customer tokens are signed); this bounds the noise and the work of a guessing client.
 * A refusal counts when the check decides it, so guesses sent at once (a customer token is verified
 * asynchronously) get `limit` answers and 429 for the rest. IPv6 addresses count by /56
 * (express-rate-limit's ipKeyGenerator), so rotating within one allocation does not reset the count.
 * The address is Express's req.ip: the connection's, unless TRUST_PROXY names the load balancers in
 * front. Counts live in this process's memory.
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
  const counts: Record<GuessedCredential, GuessCount> = {
    operator: guessCount(windowMs),
    customer: guessCount(windowMs),
  };
  return (check) => async (req, res, next) => {
    let passed = false;
    try {
      await check(req, res, (err?: unknown) => {
        if (err !== undefined) throw err;
        passed = true;
      });
    } catch (err) {
      if (err instanceof CredentialRefused && err.guessed !== undefined) {
        const key = ipKeyGenerator(req.ip ?? '');
        const { count, resetAt } = counts[err.guessed].record(key);
        if (count > limit) throw tooMany(res, resetAt, limit, windowMs);
      }
      throw err;
    }
    if (passed) next();
  };
}

interface GuessCount {
  /** Counts one more guess from `key` and returns its window's count, this one included. */
  record(key: string): { count: number; resetAt: number };
}

/** Guesses per address in fixed windows, which start at an address's first guess. */
function guessCount(windowMs: number): GuessCount {
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    record(key) {
      const now = Date.now();
      const entry = windows.get(key);
      if (entry !== undefined && entry.resetAt > now) {
        entry.count++;
        return entry;
      }
      windows.delete(key);
      if (windows.size >= MAX_TRACKED) {
        for (const [k, e] of windows) if (e.resetAt <= now) windows.delete(k);
        if (windows.size >= MAX_TRACKED) windows.delete(windows.keys().next().value!);
      }
      const fresh = { count: 1, resetAt: now + windowMs };
      windows.set(key, fresh);
      return fresh;
    },
  };
}

function tooMany(res: Response, resetAt: number, limit: number, windowMs: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  res.set('Retry-After', String(retryAfter));
  return new ApiError(
    'TOO_MANY_FAILED_ATTEMPTS',
    `${limit} refused credentials from this address within ${windowMs / 1000} s; retry after ${retryAfter} s`,
  );
}
