import type { PhaseContext } from './context.js';
import { runSustained, type SustainedResult } from './sustained.js';

/**
 * Whether the workers' workflow cache is what `--cache N` asked for: a short run of the timer path
 * with more open runs than the cache holds, then the SDK's sticky-cache metrics from each worker's
 * /metrics (size, hits, misses, forced evictions). With a small cache, misses and forced evictions
 * grow and the size stays at N.
 */
export interface CacheCheck {
  cacheLimit: number;
  run: Pick<SustainedResult, 'creation' | 'cancel'>;
  /** Per worker: every `*sticky_cache*` sample of its /metrics, before and after the run. */
  before: Array<Record<string, number>>;
  after: Array<Record<string, number>>;
}

export async function runCacheCheck(ctx: PhaseContext): Promise<CacheCheck> {
  const read = () =>
    Promise.all(ctx.stack.workerMetricsUrls.map((url) => stickyCacheSamples(url, ctx.stack.workerMetricsHeaders)));
  const before = await read();
  const limit = ctx.options.workerCache;
  // At least 3× the cache open at once: window × rate.
  const rate = Math.max(5, Math.ceil((3 * limit) / ctx.options.windowS));
  ctx.progress(`cache check: ${rate}/s for ${ctx.options.windowS} s, about ${rate * ctx.options.windowS} runs open`);
  const { creation, cancel } = await runSustained(ctx, 'timer', {
    rate,
    durationS: ctx.options.windowS,
    group: 'bench-cache-check-',
    warmUp: false,
  });
  return { cacheLimit: ctx.options.workerCache, run: { creation, cancel }, before, after: await read() };
}

async function stickyCacheSamples(url: string, headers: Record<string, string>): Promise<Record<string, number>> {
  const text = await (await fetch(url, { headers, signal: AbortSignal.timeout(10_000) })).text();
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('sticky_cache') && !line.startsWith('#'))
      .map((line) => {
        const at = line.lastIndexOf(' ');
        return [line.slice(0, at), Number(line.slice(at + 1))];
      }),
  );
}
