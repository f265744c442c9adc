import { join } from 'node:path';
import type { PhaseContext } from '../context.js';
import type { PeerKind } from './kinds.js';
import { runPeerStorm, type PeerStormResult } from './peer-storm.js';
import { runPeerSustained, type PeerSustainedResult } from './peer-sustained.js';
import { startRedisServer, type RunningRedis } from './redis-server.js';

export interface PeersResult {
  sustained: PeerSustainedResult[];
  storms: PeerStormResult[];
  /** Peers that could not be measured on this machine (e.g. no redis-server and no root to install it), and why. */
  skipped: Array<{ kind: PeerKind; why: string }>;
}

/**
 * Each selected peer at the sustained rate, then its storm, then the same storm with the peer
 * SIGKILLed a third of the way (the scan job only the last, with `scanCrashOnly`). A peer that
 * fails is reported as skipped, with why, and the others still run: the peers come last in a full
 * run, after 20 minutes of the service's phases, whose report must not be lost with it.
 */
export async function runPeers(
  ctx: PhaseContext,
  kinds: readonly PeerKind[],
  rate: number,
  /** The scan job's crash storm only: its sustained phase and storm are the service phases' scan baseline, the same code. */
  { scanCrashOnly = false }: { scanCrashOnly?: boolean } = {},
): Promise<PeersResult> {
  const { options } = ctx;
  const results: PeersResult = { sustained: [], storms: [], skipped: [] };
  const skip = (kind: PeerKind, err: unknown) => {
    const why = err instanceof Error ? err.message : String(err);
    ctx.progress(`peer ${kind} skipped: ${why}`);
    results.skipped.push({ kind, why });
  };
  let redis: RunningRedis | undefined;
  if (kinds.includes('redis')) {
    try {
      redis = await startRedisServer(options.ports.redis, join(options.outDir, 'logs'));
    } catch (err) {
      skip('redis', err);
    }
  }
  // Bounded: a storm drains well within 180 s here. A crash run waits for what the dead consumer left
  // behind (Redis: the 30-s visibility timeout) but not for what never comes back (graphile-worker's
  // 4-hour lock, the scan's committed batch): that is reported as lost or uncompensated.
  const settleBoundS = (crash: boolean) => (crash ? (options.quick ? 60 : 120) : 180);
  try {
    for (const kind of kinds) {
      if (kind === 'redis' && !redis) continue;
      try {
        const crashOnly = scanCrashOnly && kind === 'scan';
        if (!crashOnly)
          results.sustained.push(
            await runPeerSustained(ctx, kind, { rate, redisUrl: redis?.url, redisPid: redis?.process.pid }),
          );
        for (const crash of crashOnly ? [true] : [false, true])
          results.storms.push(
            await runPeerStorm(ctx, kind, {
              crash,
              redisUrl: redis?.url,
              redisPid: redis?.process.pid,
              settleBoundS: settleBoundS(crash),
            }),
          );
      } catch (err) {
        skip(kind, err);
      }
    }
  } finally {
    await redis?.stop();
  }
  return results;
}
