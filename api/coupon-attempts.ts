import { ApiError } from './errors.js';

/** Customers tracked at once; past it the oldest go first, so a flood of customers cannot exhaust memory. */
const MAX_TRACKED = 50_000;

/** Runs a customer's placement that names a coupon, within that customer's allowance of refused codes. */
export type CouponAttempts = <T>(customerId: string, place: () => Promise<T>) => Promise<T>;

/**
 * Guessing coupon codes is slowed per customer: once a customer has had `limit` codes refused
 * (COUPON_UNAVAILABLE: unknown, in use, or another customer's) within a window, their placements
 * that name a coupon are refused with 429 until the window ends, before any workflow starts; their
 * orders without a coupon are not affected. Placements still running count against the allowance
 * until they end, so a burst sent at once gets at most `limit` codes tried. The window begins with
 * the first refused code. Counts live in this process's memory, as the placements' rate limit does:
 * the count is a brake on guessing, where one more guess per restart changes nothing, and the answer
 * costs no database connection.
 */
export function couponAttemptLimit({ limit, windowMs }: { limit: number; windowMs: number }): CouponAttempts {
  if (limit === 0) return (_customerId, place) => place();
  const customers = new Map<string, { refused: number; running: number; windowEndsAt: number }>();

  const entryOf = (customerId: string, now: number) => {
    let entry = customers.get(customerId);
    if (entry !== undefined && entry.refused > 0 && entry.windowEndsAt <= now) entry.refused = 0;
    if (entry === undefined) {
      if (customers.size >= MAX_TRACKED) forgetOne(now);
      entry = { refused: 0, running: 0, windowEndsAt: 0 };
      customers.set(customerId, entry);
    }
    return entry;
  };
  /** An idle customer if there is one, else the oldest. */
  const forgetOne = (now: number) => {
    for (const [key, e] of customers)
      if (e.running === 0 && (e.refused === 0 || e.windowEndsAt <= now)) return customers.delete(key);
    return customers.delete(customers.keys().next().value!);
  };

  return async (customerId, place) => {
    const now = Date.now();
    const entry = entryOf(customerId, now);
    if (entry.refused + entry.running >= limit) {
      // Only running placements fill the allowance: one of them ends soon.
      const retryAfter = entry.refused > 0 ? Math.ceil((entry.windowEndsAt - now) / 1000) : 1;
      throw new ApiError(
        'TOO_MANY_COUPON_ATTEMPTS',
        `${limit} coupon codes refused within ${windowMs / 1000} s; retry after ${retryAfter} s, or order without a coupon`,
        undefined,
        { 'Retry-After': String(retryAfter) },
      );
    }
    entry.running++;
    try {
      return await place();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'COUPON_UNAVAILABLE') {
        if (entry.refused === 0) entry.windowEndsAt = Date.now() + windowMs;
        entry.refused++;
      }
      throw err;
    } finally {
      entry.running--;
      // An idle customer is forgotten; the map may hold a newer entry for them if this one was evicted.
      if (entry.running === 0 && entry.refused === 0 && customers.get(customerId) === entry)
        customers.delete(customerId);
    }
  };
}
