import { afterEach, describe, expect, it, vi } from 'vitest';
import { couponAttemptLimit } from '../../api/coupon-attempts.js';
import { ApiError, businessError } from '../../api/errors.js';

/** The allowance of refused coupon codes alone, with placements that answer at once (or when told). */
const LIMIT = 3;
const HOUR = 60 * 60_000;

const refused = () => Promise.reject(businessError('COUPON_UNAVAILABLE', { couponCode: 'GUESS' }));
const placed = () => Promise.resolve('placed');
/** What an attempt ended with: the placement's answer, or the code of its error. */
const outcome = (attempt: Promise<unknown>) =>
  attempt.then(
    (value) => value,
    (err: unknown) => (err instanceof ApiError ? err.code : err),
  );

afterEach(() => {
  vi.useRealTimers();
});

describe('couponAttemptLimit', () => {
  it('after the limit of refused codes refuses the customer with 429 and Retry-After, without placing; others are not affected', async () => {
    const attempt = couponAttemptLimit({ limit: LIMIT, windowMs: HOUR });
    for (let i = 0; i < LIMIT; i++) expect(await outcome(attempt('guesser', refused))).toBe('COUPON_UNAVAILABLE');

    const place = vi.fn(placed);
    const err = await attempt('guesser', place).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'TOO_MANY_COUPON_ATTEMPTS', status: 429, headers: { 'Retry-After': '3600' } });
    expect(place).not.toHaveBeenCalled();
    expect(await attempt('neighbour', placed)).toBe('placed');
  });

  it('counts only refused codes: placed orders and other failures leave the allowance whole', async () => {
    const attempt = couponAttemptLimit({ limit: LIMIT, windowMs: HOUR });
    const outOfStock = () => Promise.reject(businessError('OUT_OF_STOCK', { sku: 'TEA' }));
    const down = () => Promise.reject(new Error('Temporal is down'));
    for (let i = 0; i < 10; i++) {
      expect(await outcome(attempt('buyer', placed))).toBe('placed');
      expect(await outcome(attempt('buyer', outOfStock))).toBe('OUT_OF_STOCK');
      expect(await outcome(attempt('buyer', down))).toEqual(new Error('Temporal is down'));
    }
    for (let i = 0; i < LIMIT; i++) expect(await outcome(attempt('buyer', refused))).toBe('COUPON_UNAVAILABLE');
    expect(await outcome(attempt('buyer', placed))).toBe('TOO_MANY_COUPON_ATTEMPTS');
  });

  it('gives codes sent at once no more tries than the limit: placements still running count', async () => {
    const attempt = couponAttemptLimit({ limit: LIMIT, windowMs: HOUR });
    const release: Array<() => void> = [];
    const slowRefusal = () =>
      new Promise<never>((_, reject) =>
        release.push(() => reject(businessError('COUPON_UNAVAILABLE', { couponCode: 'GUESS' }))),
      );
    const burst = Array.from({ length: 10 }, () => outcome(attempt('guesser', slowRefusal)));
    expect(release).toHaveLength(LIMIT);
    for (const refuse of release) refuse();
    const outcomes = await Promise.all(burst);
    expect(outcomes.filter((o) => o === 'COUPON_UNAVAILABLE')).toHaveLength(LIMIT);
    expect(outcomes.filter((o) => o === 'TOO_MANY_COUPON_ATTEMPTS')).toHaveLength(10 - LIMIT);
  });

  it('takes coupons again once the window that began with the first refused code has ended', async () => {
    vi.useFakeTimers();
    const attempt = couponAttemptLimit({ limit: LIMIT, windowMs: HOUR });
    expect(await outcome(attempt('guesser', refused))).toBe('COUPON_UNAVAILABLE');
    vi.advanceTimersByTime(HOUR / 2);
    for (let i = 1; i < LIMIT; i++) expect(await outcome(attempt('guesser', refused))).toBe('COUPON_UNAVAILABLE');
    const err = await attempt('guesser', placed).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TOO_MANY_COUPON_ATTEMPTS', headers: { 'Retry-After': String(HOUR / 2000) } });
    vi.advanceTimersByTime(HOUR / 2);
    expect(await attempt('guesser', placed)).toBe('placed');
  });

  it('limit 0: no limit', async () => {
    const attempt = couponAttemptLimit({ limit: 0, windowMs: HOUR });
    for (let i = 0; i < 100; i++) expect(await outcome(attempt('guesser', refused))).toBe('COUPON_UNAVAILABLE');
  });
});
