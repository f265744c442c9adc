/**
 * The one backoff rule of a run's repeated asking: the first wait, then twice as long each time,
 * up to a cap. `tries` counts from 1.
 */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

export function backoffWait({ firstMs, maxMs }: Backoff, tries: number): number {
  return Math.min(firstMs * 2 ** Math.min(tries - 1, 52), maxMs);
}
