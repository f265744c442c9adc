import { describe, expect, it } from 'vitest';
import { databaseOptions, moneyOptions, STEP_STUCK_AFTER } from '../../workflows/activity-options.js';
import { attemptsWithin } from '../../workflows/steps.js';

/** The backoff before each attempt after the first, as Temporal computes it. */
function backoffsMs(initialMs: number, coefficient: number, maximumMs: number, attempts: number): number[] {
  return Array.from({ length: attempts - 1 }, (_, i) => Math.min(initialMs * coefficient ** i, maximumMs));
}
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const FIVE_MINUTES = 5 * 60_000;

describe("a local step's round: as many attempts as its backoff fits into STEP_STUCK_AFTER", () => {
  it('fits the database preset (200 ms doubling, capped at a minute) into five minutes, and not one attempt more', () => {
    expect(STEP_STUCK_AFTER).toBe('5 minutes');
    const attempts = attemptsWithin(databaseOptions.retry!, STEP_STUCK_AFTER);
    expect(sum(backoffsMs(200, 2, 60_000, attempts))).toBeLessThanOrEqual(FIVE_MINUTES);
    expect(sum(backoffsMs(200, 2, 60_000, attempts + 1))).toBeGreaterThan(FIVE_MINUTES);
    expect(attempts).toBe(13);
  });

  it('fits the money preset (1 s doubling, capped at a minute) the same way', () => {
    const attempts = attemptsWithin(moneyOptions.retry!, STEP_STUCK_AFTER);
    expect(sum(backoffsMs(1_000, 2, 60_000, attempts))).toBeLessThanOrEqual(FIVE_MINUTES);
    expect(sum(backoffsMs(1_000, 2, 60_000, attempts + 1))).toBeGreaterThan(FIVE_MINUTES);
    expect(attempts).toBe(10);
  });

  it('reads numbers as milliseconds, and is one attempt when not even one backoff fits', () => {
    expect(attemptsWithin({ initialInterval: 1_000, backoffCoefficient: 1, maximumInterval: 1_000 }, 3_500)).toBe(4);
    expect(attemptsWithin({ initialInterval: '10s' }, '5s')).toBe(1);
  });

  it('refuses a backoff of zero, which would never use up the budget', () => {
    expect(() => attemptsWithin({ initialInterval: 0 }, '5 minutes')).toThrow(RangeError);
  });
});
