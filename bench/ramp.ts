import type { PhaseContext } from './context.js';
import type { ResourceUse } from './resources.js';
import { runSustained } from './sustained.js';
import type { Summary } from './stats.js';
import { rampHasEnough } from './targets.js';

/**
 * Offered rates tried in turn, up to `--rate`; 40 is the target rate (bench/targets.ts). The slowest
 * machine of this kind seen held 15/s (2026-12-01, at twice today's CPU per order), so the ramp
 * starts there: a step below it (about a minute with its settling) took the full bench past its 25
 * minutes on a fast machine (2026-12-04, 25 min 36 s).
 */
const RATES = [15, 20, 30, 40, 50, 75, 100, 150, 200];
/** A step that falls this far behind its schedule stops offering orders: it did not hold. */
const GIVE_UP_BEHIND_MS = 5_000;
/**
 * The load generator is open-loop, so a rate beyond capacity shows as a backlog that grows for as
 * long as the step lasts: POST /orders waits longer and longer, and so do cancellations. A step
 * holds only while both stay within this bound (p99): the service kept up at that rate.
 */
const KEPT_UP_P99_MS = 2_000;

/** One step of the ramp: its rate, whether it held (and why not), and what it measured. */
export interface RampStep {
  rate: number;
  held: boolean;
  /** Why the step did not hold ('' when it held). */
  why: string;
  achievedRate: number;
  created: number;
  failed: number;
  abandoned: number;
  creationMs: Summary;
  lagMs: Summary;
  negative: number;
  cpuMsPerOrder: Record<string, number>;
  /** What the step took while its orders were offered (its cores per process). */
  underLoad: ResourceUse;
}

export interface RampResult {
  steps: RampStep[];
  /** Highest rate that held, or null when even the first step did not. */
  maxSustained: number | null;
}

/**
 * The highest order rate the timer path sustains end to end: each step offers its rate through
 * POST /orders for `rampStepS` (its own orders, a share paid), waits until every order is settled,
 * and holds when every order was created and both POST /orders and cancellation kept their p99
 * within 2 s. The ramp stops at the first step that does not hold, or at the first one at or above
 * the target rate past the rate target's conditions (targets.ts); latencies are reported per step,
 * and bench/targets.ts judges the rate target from them.
 */
export async function runRamp(ctx: PhaseContext): Promise<RampResult> {
  const { options } = ctx;
  const rates = [...RATES.filter((r) => r < options.rate), options.rate];
  const steps: RampStep[] = [];
  for (const [i, rate] of rates.entries()) {
    ctx.progress(`step ${rate} orders/s for ${options.rampStepS} s`);
    const r = await runSustained(ctx, 'timer', {
      rate,
      durationS: options.rampStepS,
      group: `bench-ramp-${rate}-`,
      warmUp: i === 0,
      giveUpBehindMs: GIVE_UP_BEHIND_MS,
    });
    const c = r.creation;
    const why = [
      c.failed > 0 ? `${c.failed} failed` : '',
      c.abandoned > 0 ? `fell ${GIVE_UP_BEHIND_MS / 1000} s behind, ${c.abandoned} not offered` : '',
      (c.latencyMs.p99 ?? 0) > KEPT_UP_P99_MS ? `POST /orders p99 ${(c.latencyMs.p99! / 1000).toFixed(1)} s` : '',
      (r.cancel.lagMs.p99 ?? 0) > KEPT_UP_P99_MS ? `cancel lag p99 ${(r.cancel.lagMs.p99! / 1000).toFixed(1)} s` : '',
      r.cancel.settled ? '' : 'not settled within the bound',
    ]
      .filter(Boolean)
      .join('; ');
    const orders = c.completed + c.failed;
    steps.push({
      rate,
      held: why === '',
      why,
      achievedRate: c.achievedRate,
      created: c.completed,
      failed: c.failed,
      abandoned: c.abandoned,
      creationMs: c.latencyMs,
      lagMs: r.cancel.lagMs,
      negative: r.cancel.negative,
      cpuMsPerOrder: Object.fromEntries(
        Object.entries(r.resources.cpuS).map(([k, v]) => [k, orders ? (1000 * v) / orders : 0]),
      ),
      underLoad: r.underLoad,
    });
    ctx.progress(
      `step ${rate}/s ${why === '' ? `held; cancel lag p99 ${r.cancel.lagMs.p99} ms` : `did not hold: ${why}`}`,
    );
    if (why !== '' || rampHasEnough(steps)) break;
  }
  return { steps, maxSustained: steps.filter((s) => s.held).at(-1)?.rate ?? null };
}
