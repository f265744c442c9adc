import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { benchChild, type BenchChild } from '../child-process.js';
import type { PhaseContext } from '../context.js';
import type { ResourceUse } from '../resources.js';
import { ROLES } from '../stack.js';
import type { PeerKind } from './kinds.js';
import type { PeerProcessArgs } from './peer-main.js';

/**
 * The customer-id prefix of a peer's orders in one phase. The bench finds a group by prefix, so no
 * group's prefix may start another's: the phase comes before the end.
 */
export function peerGroup(kind: PeerKind, phase: 'sustained' | 'storm' | 'crash'): string {
  return `bench-peer-${phase}-${kind}-`;
}

/** Every PAY_EVERY-th order of a peer's phase is paid before its deadline (the peer then forgets it). */
export const PAY_EVERY = 10;

/**
 * The processes a peer's expiries run in. Temporal, the worker and the API serve only the storm
 * probes meanwhile (metered, not counted here); PostgreSQL's share includes the probes' statements.
 */
const PEER_COMPONENTS = ['postgres', 'peer', 'redis'] as const;

/** CPU of the peer's processes per cancellation with its compensation (ms), each process apart. */
export function cpuMsPerCancel(resources: ResourceUse, cancelled: number): Record<string, number> | null {
  if (cancelled === 0) return null;
  return Object.fromEntries(PEER_COMPONENTS.map((c) => [c, (1000 * (resources.cpuS[c] ?? 0)) / cancelled]));
}

/** A peer's process for one group of orders (peer-main.ts), and its counters once stopped cleanly. */
export async function peerProcess(
  ctx: PhaseContext,
  kind: PeerKind,
  run: { name: string; group: string; redisUrl: string | undefined },
): Promise<BenchChild & { stats(): Promise<Record<string, number> | null> }> {
  const { options, stack } = ctx;
  const logDir = join(options.outDir, 'logs');
  const statsFile = join(logDir, `${run.name}.stats.json`);
  await rm(statsFile, { force: true });
  const child = benchChild(
    run.name,
    'bench/peers/peer-main.ts',
    {
      kind,
      databaseUrl: stack.urlAs(ROLES.peer),
      redisUrl: run.redisUrl,
      paymentWindowMs: options.windowS * 1000,
      scan: { everyMs: options.scanEveryS * 1000, batch: options.scanBatch, prefix: run.group },
      statsFile,
    } satisfies PeerProcessArgs,
    logDir,
  );
  return {
    ...child,
    stats: () =>
      readFile(statsFile, 'utf8').then(
        (t) => JSON.parse(t) as Record<string, number>,
        () => null,
      ),
  };
}
