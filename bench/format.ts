import { round, type Summary } from './stats.js';

/** How figures read in the report: '–' for a figure the run does not have. */
export const ms = (n: number | null | undefined) =>
  n == null ? '–' : n === Infinity ? 'no answer' : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
export const num = (n: number | null | undefined, d = 1) => (n == null ? '–' : String(round(n, d)));
export const x = (n: number | null) => (n == null ? '–' : `${round(n, n < 10 ? 2 : 1)}×`);
export const pct = (s: Summary) => `${ms(s.p50)} / ${ms(s.p95)} / ${ms(s.p99)} / ${ms(s.max)}`;
export const bytes = (n: number) => {
  const a = Math.abs(n);
  if (a >= 10 * 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MB`;
  if (a >= 10_240) return `${(n / 1024).toFixed(0)} kB`;
  return a >= 1024 ? `${(n / 1024).toFixed(1)} kB` : `${Math.round(n)} B`;
};
