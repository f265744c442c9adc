/** Latency samples and their summary: p50, p99, max, and how many answers were not the expected ones. */
export interface Sample {
  ms: number;
  ok: boolean;
}

export interface LatencyStats {
  n: number;
  p50: number;
  p99: number;
  max: number;
  failed: number;
}

export function latencyStats(samples: readonly Sample[]): LatencyStats {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return {
    n: samples.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1) ?? NaN,
    failed: samples.filter((s) => !s.ok).length,
  };
}

export function describeLatency(s: LatencyStats, okAnswer: string): string {
  return `${s.n} calls, p50 ${s.p50.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms, max ${s.max.toFixed(0)} ms, not ${okAnswer}: ${s.failed}`;
}
