import { describe, expect, it } from 'vitest';
import { rateOfMost } from '../pacer.js';

describe("the load generator's achieved rate", () => {
  const start = 1_000_000;
  /** n completions, one every 1000/rate ms from `start`. */
  const steady = (n: number, rate: number) => Array.from({ length: n }, (_, i) => start + ((i + 1) * 1000) / rate);

  it('is the rate at which tasks completed when they kept pace', () => {
    expect(rateOfMost(start, steady(1_200, 40))).toBeCloseTo(40, 1);
  });

  it('is not set by one task that stalled for seconds after the rest', () => {
    const done = [...steady(1_199, 40), start + 30_000 + 10_000];
    expect(rateOfMost(start, done)).toBeCloseTo(40, 0);
  });

  it('falls with a backlog: tasks completing slower than they were offered', () => {
    expect(rateOfMost(start, steady(1_200, 25))).toBeCloseTo(25, 1);
  });

  it('is 0 when nothing completed', () => {
    expect(rateOfMost(start, [])).toBe(0);
  });
});
