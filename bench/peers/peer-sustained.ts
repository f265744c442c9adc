import type { PhaseContext } from '../context.js';
import { placedFrom } from '../../domain/placement.js';
import { createDirectActivities } from '../direct-placement.js';
import { cancelOutcome, waitUntilSettled } from '../outcomes.js';
import { runPaced, type PacedRun } from '../pacer.js';
import { ResourceMeter, type ResourceUse } from '../resources.js';
import { ROLES } from '../stack.js';
import { summarize, type Summary } from '../stats.js';
import { placeRequest, seedCoupons } from '../workload.js';
import { peerDeadlines } from './deadlines.js';
import type { PeerKind } from './kinds.js';
import { payDirectly } from './payment.js';
import { cpuMsPerCancel, PAY_EVERY, peerGroup, peerProcess } from './peer-process.js';

/**
 * A peer under the sustained phase's workload: `rate` orders/s for `durationS`, each expiring
 * `windowS` after it was written by the service's placeOrder and handed to the peer, every
 * PAY_EVERY-th paid first. What the steady state costs and how late the peer cancels: the cancel
 * lag, early cancellations, CPU of the peer's processes per expired order.
 */
export interface PeerSustainedResult {
  kind: PeerKind;
  creation: PacedRun & { offeredRate: number };
  settled: boolean;
  lagMs: Summary;
  compensatedLagMs: Summary;
  negative: number;
  /**
   * Over the whole phase, per expired order: PostgreSQL's includes the placements, the payments and
   * (graphile-worker) the jobs added, all made by the bench's process; the peer's includes its idle polling.
   */
  cpuMsPerCancel: Record<string, number> | null;
  resources: ResourceUse;
}

export async function runPeerSustained(
  ctx: PhaseContext,
  kind: PeerKind,
  peer: { rate: number; redisUrl: string | undefined; redisPid: number | undefined },
): Promise<PeerSustainedResult> {
  const { options, stack, observer } = ctx;
  const group = peerGroup(kind, 'sustained');
  const count = Math.round(peer.rate * options.durationS);
  await seedCoupons(stack.adminUrl, group, count);
  const deadlines = await peerDeadlines(kind, { databaseUrl: stack.urlAs(ROLES.seed), redisUrl: peer.redisUrl });
  const seed = createDirectActivities(stack.urlAs(ROLES.seed), {
    paymentWindowMs: options.windowS * 1000,
    maxConnections: 10,
  });
  const child = await peerProcess(ctx, kind, { name: `peer-${kind}-sustained`, group, redisUrl: peer.redisUrl });
  const proc = await child.start();
  const meter = new ResourceMeter({
    ...stack.pids,
    peer: [proc.pid],
    ...(kind === 'redis' ? { redis: [peer.redisPid] } : {}),
  });
  ctx.progress(`${kind}: ${peer.rate}/s for ${options.durationS} s, window ${options.windowS} s`);
  const started = Date.now();
  const creation = await runPaced({
    rate: peer.rate,
    count,
    maxInFlight: 256,
    progress: (line) => ctx.progress(`${kind}: creating ${line}`),
    task: async (i) => {
      const request = placeRequest(group, i);
      const placed = placedFrom(request, await seed.run(seed.activities.placeOrder, request));
      await deadlines.schedule(placed.id, Date.parse(placed.expiresAt));
      if (i % PAY_EVERY === PAY_EVERY - 1 && (await payDirectly(seed, placed))) await deadlines.forget(placed.id);
    },
  });
  const settled = await waitUntilSettled(
    observer,
    group,
    {
      notBefore: started + creation.elapsedS * 1000 + options.windowS * 1000,
      deadline: Date.now() + options.windowS * 1000 + 180_000,
    },
    (line) => ctx.progress(`${kind}: settling: ${line}`),
  );
  const resources = meter.finish();
  await proc.stop();
  await Promise.all([seed.close(), deadlines.close()]);
  const outcome = await cancelOutcome(observer, group);
  return {
    kind,
    creation: { ...creation, offeredRate: peer.rate },
    settled,
    lagMs: summarize(outcome.lagsMs),
    compensatedLagMs: summarize(outcome.compensatedLagsMs),
    negative: outcome.negative,
    cpuMsPerCancel: cpuMsPerCancel(resources, outcome.lagsMs.length),
    resources,
  };
}
