import { CLIENT_TIMEOUT_MS, postOrder } from './api-client.js';
import type { PhaseContext } from './context.js';
import { waitUntilFinished } from './outcomes.js';
import { runPaced } from './pacer.js';
import { ResourceMeter, SERVICE_COMPONENTS } from './resources.js';
import { ROLES, type BenchStack } from './stack.js';
import { summarize, type Summary } from './stats.js';
import { GROUPS, orderBody } from './workload.js';

/**
 * Customers during a storm: POST /orders at PROBE_RATE orders/s, open loop, each order then paid
 * through the signed webhook, so both answers are timed while the storm runs. A probe is a whole
 * order (about 0.1 s of CPU here), so it also costs what an order costs; that cost is measured
 * before the storm (measureProbeCost) and taken out of the storm's per-cancellation figures.
 */
export const PROBE_RATE = 2;
/** Longest the probes run: the storm's settle bound (180 s) and then some. */
const PROBE_BOUND_S = 200;
/** Probes placed and paid to measure what one costs. */
const CALIBRATION_PROBES = 10;

export interface ProbeResult {
  /** Probes started (each: POST /orders, then the webhook if placed). */
  sent: number;
  /** Probes started per second while probing. */
  offeredRate: number;
  /** Answered POST /orders (201): each latency, and their summary. */
  placeLatenciesMs: number[];
  placeMs: Summary;
  /** POST /orders that failed or got no answer within CLIENT_TIMEOUT_MS. */
  placeFailed: number;
  /** Answered webhooks (202) of the placed probes. */
  webhookLatenciesMs: number[];
  webhookMs: Summary;
  webhookFailed: number;
}

/** What one probe (placed and paid, with the fulfillment that follows) costs the service, measured while it is otherwise idle. */
export interface ProbeCost {
  probes: number;
  /** pg_stat_statements calls of the service's role per probe. */
  statements: number;
  /** CPU of each service process per probe (ms). */
  cpuMs: Record<string, number>;
}

/** Starts the probes; `stop()` stops starting new ones, waits for those in flight and returns what they saw. */
export function startProbes(
  stack: Pick<BenchStack, 'apiBase' | 'pay'>,
  group: string,
): { stop(): Promise<ProbeResult> } {
  let probing = true;
  const placeMs: number[] = [];
  const webhookMs: number[] = [];
  let placeFailed = 0;
  let webhookFailed = 0;
  const began = Date.now();
  let stoppedAt = began;
  const run = runPaced({
    rate: PROBE_RATE,
    count: PROBE_RATE * PROBE_BOUND_S,
    // Room for every probe to hang for both of its calls: a stalled API must not slow the offered rate.
    maxInFlight: Math.ceil((PROBE_RATE * 2 * CLIENT_TIMEOUT_MS) / 1000) + PROBE_RATE,
    until: () => !probing,
    task: async (i) => {
      let placed;
      try {
        placed = await postOrder(stack.apiBase, orderBody(group, i, { coupon: false }));
        placeMs.push(placed.latencyMs);
      } catch {
        placeFailed++;
        return;
      }
      try {
        webhookMs.push(await stack.pay(placed));
      } catch {
        webhookFailed++;
      }
    },
  });
  return {
    async stop() {
      probing = false;
      stoppedAt = Date.now();
      const { started } = await run;
      return {
        sent: started,
        offeredRate: started / Math.max(1, (stoppedAt - began) / 1000),
        placeLatenciesMs: placeMs,
        placeMs: summarize(placeMs),
        placeFailed,
        webhookLatenciesMs: webhookMs,
        webhookMs: summarize(webhookMs),
        webhookFailed,
      };
    },
  };
}

/**
 * Statements and CPU of one probe, placed and paid at PROBE_RATE like the storm's, until the
 * fulfillment their payment starts is done. The service's idle background at that rate is in it,
 * as it is in the storm's window, so taking probes × this out of the storm leaves the storm's own cost.
 */
export async function measureProbeCost(ctx: PhaseContext, group: string): Promise<ProbeCost> {
  const { observer, stack } = ctx;
  await observer.resetStatements();
  const meter = new ResourceMeter(stack.pids);
  let placed = 0;
  await runPaced({
    rate: PROBE_RATE,
    count: CALIBRATION_PROBES,
    maxInFlight: CALIBRATION_PROBES,
    task: async (i) => {
      const order = await postOrder(stack.apiBase, orderBody(group, i, { coupon: false }));
      placed++;
      await stack.pay(order);
    },
  });
  // A probe whose payment failed is cancelled when its window ends: wait for that too, bounded.
  await waitUntilFinished(observer, group, Date.now() + ctx.options.windowS * 1000 + 30_000);
  const resources = meter.finish();
  const calls = (await observer.statementsByRole())[ROLES.service]?.calls ?? 0;
  const per = (n: number) => (placed ? n / placed : 0);
  return {
    probes: placed,
    statements: per(calls),
    cpuMs: Object.fromEntries(SERVICE_COMPONENTS.map((c) => [c, per(1000 * (resources.cpuS[c] ?? 0))])),
  };
}

/** The group a path's storm probes are placed in (GROUPS.probe, so no storm count includes them). */
export function probeGroup(path: 'timer' | 'scan', use: 'storm' | 'cost'): string {
  return `${GROUPS.probe}${use}-${path}-`;
}
