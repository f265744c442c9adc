import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLimited } from '../../dev/pool.js';
import type { ManagedProcess } from '../../dev/managed-process.js';
import type { PlacedOrder } from '../../domain/messages.js';
import type { PhaseContext } from '../context.js';
import { createDirectActivities } from '../direct-placement.js';
import { cancelOutcome, unsettledCount, waitUntilSettled } from '../outcomes.js';
import { ResourceMeter, type ResourceUse } from '../resources.js';
import { ROLES } from '../stack.js';
import { summarize, type Summary } from '../stats.js';
import { startProbes, type ProbeResult } from '../storm-probes.js';
import { GROUPS, placeRequest, seedCoupons } from '../workload.js';
import { peerDeadlines } from './deadlines.js';
import type { PeerKind } from './kinds.js';
import { crashOutcome, type CrashOutcome } from './peer-outcomes.js';
import { payDirectly } from './payment.js';
import { cpuMsPerCancel, PAY_EVERY, peerGroup, peerProcess } from './peer-process.js';

/**
 * A storm for one peer: `storm` orders written by the service's placeOrder with one deadline, each
 * handed to the peer as the product would at placement; every PAY_EVERY-th is paid before the
 * deadline (the peer forgets it). The peer runs in a process of its own; with `crash` it is
 * SIGKILLed once a third of the storm is cancelled and started again at once. Measured from the
 * deadline: until every order is cancelled and compensated (bounded by `settleBoundS`), CPU per
 * cancellation of each process, checkout's answers meanwhile (the storm probes), and what the crash
 * lost or ran twice.
 */
/**
 * A crash run stops waiting once nothing has moved for longer than the peer takes to pick up what
 * its dead process held (outcomes.ts): the Redis peer's claims come back after its 30-s visibility
 * timeout and 5-s reaper; the scan job looks again every --scan-every s; graphile-worker polls every
 * 2 s and leaves a dead worker's jobs locked for 4 hours, so nothing of those comes back here.
 */
const crashStallMs = (kind: PeerKind, scanEveryS: number) =>
  kind === 'redis' ? 45_000 : kind === 'scan' ? Math.max(20_000, 4_000 * scanEveryS) : 20_000;

export interface PeerStormResult {
  kind: PeerKind;
  crash: boolean;
  orders: number;
  paid: number;
  settled: boolean;
  /** Seconds from the deadline to the last cancellation notice, when all settled. */
  allDoneS: number | null;
  lagMs: Summary;
  compensatedLagMs: Summary;
  negative: number;
  /** Seconds after the deadline the peer was killed, and how many were cancelled by then. */
  killedAtS: number | null;
  cancelledAtKill: number | null;
  outcome: CrashOutcome;
  /** PostgreSQL, the peer's process and Redis: CPU per cancellation with its compensation (ms). */
  cpuMsPerCancel: Record<string, number> | null;
  probes: ProbeResult;
  /** The peer's own counters (its last process's, from a clean stop). */
  peerStats: Record<string, number> | null;
  resources: ResourceUse;
}

export async function runPeerStorm(
  ctx: PhaseContext,
  kind: PeerKind,
  peer: { crash: boolean; redisUrl: string | undefined; redisPid: number | undefined; settleBoundS: number },
): Promise<PeerStormResult> {
  const { options, stack, observer } = ctx;
  const k = peer.crash ? options.crashStorm : options.storm;
  const group = peerGroup(kind, peer.crash ? 'crash' : 'storm');
  await seedCoupons(stack.adminUrl, group, k);
  const deadlines = await peerDeadlines(kind, { databaseUrl: stack.urlAs(ROLES.seed), redisUrl: peer.redisUrl });
  const deadline = Date.now() + 15_000 + k * 6;
  ctx.progress(`${kind}: seeding ${k} orders expiring at ${new Date(deadline).toISOString()}`);
  const seed = createDirectActivities(stack.urlAs(ROLES.seed), {
    paymentWindowMs: options.windowS * 1000,
    maxConnections: 10,
  });
  const paidIds: string[] = [];
  await forEachLimited([...Array(k).keys()], 16, async (i) => {
    const placed: PlacedOrder = await seed.placeExpiringAt(placeRequest(group, i), deadline);
    await deadlines.schedule(placed.id, Date.parse(placed.expiresAt));
    if (i % PAY_EVERY === PAY_EVERY - 1 && (await payDirectly(seed, placed))) {
      await deadlines.forget(placed.id);
      paidIds.push(placed.id);
    }
  });
  await Promise.all([seed.close(), deadlines.close()]);

  const child = await peerProcess(ctx, kind, {
    name: `peer-${kind}-${peer.crash ? 'crash' : 'storm'}`,
    group,
    redisUrl: peer.redisUrl,
  });
  let proc: ManagedProcess = await child.start();
  const peerPids: Array<number | undefined> = [proc.pid];
  await sleep(Math.max(0, deadline - 2_000 - Date.now()));
  ctx.progress(`${kind}: storm, ${k} orders expire now${peer.crash ? ' (the peer is killed a third of the way)' : ''}`);
  const meter = new ResourceMeter({
    ...stack.pids,
    peer: peerPids,
    ...(kind === 'redis' ? { redis: [peer.redisPid] } : {}),
  });
  const probing = startProbes(stack, `${GROUPS.probe}storm-peer-${kind}-`);
  let killedAtS: number | null = null;
  let cancelledAtKill: number | null = null;
  if (peer.crash) {
    const bound = deadline + peer.settleBoundS * 1000;
    for (;;) {
      const { cancelled } = await unsettledCount(observer, group);
      if (cancelled >= k / 3 || Date.now() > bound) break;
      await sleep(100);
    }
    await proc.kill();
    killedAtS = (Date.now() - deadline) / 1000;
    cancelledAtKill = (await unsettledCount(observer, group)).cancelled;
    ctx.progress(`${kind}: SIGKILLed at +${killedAtS.toFixed(1)} s (${cancelledAtKill} cancelled), starting it again`);
    proc = await child.start();
    peerPids.push(proc.pid);
  }
  const settled = await waitUntilSettled(
    observer,
    group,
    {
      notBefore: deadline + 500,
      deadline: deadline + peer.settleBoundS * 1000,
      ...(peer.crash ? { stallMs: crashStallMs(kind, ctx.options.scanEveryS) } : {}),
    },
    (line) => ctx.progress(`${kind}: ${line}`),
  );
  const probes = await probing.stop();
  const resources = meter.finish();
  await proc.stop();
  const peerStats = await child.stats();
  const cancelled = await cancelOutcome(observer, group);
  const outcome = await crashOutcome(observer, group, paidIds);
  const n = cancelled.lagsMs.length;
  return {
    kind,
    crash: peer.crash,
    orders: k,
    paid: paidIds.length,
    settled,
    allDoneS: settled && cancelled.lastCompensated ? (cancelled.lastCompensated.getTime() - deadline) / 1000 : null,
    lagMs: summarize(cancelled.lagsMs),
    compensatedLagMs: summarize(cancelled.compensatedLagsMs),
    negative: cancelled.negative,
    killedAtS,
    cancelledAtKill,
    outcome,
    // A killed process's CPU leaves the meter with it: per cancellation only from a storm without a crash.
    cpuMsPerCancel: peer.crash ? null : cpuMsPerCancel(resources, n),
    probes,
    peerStats,
    resources,
  };
}
