import { join } from 'node:path';
import type { PhaseContext } from '../context.js';
import type { PeerKind } from './kinds.js';
import { runPeerStorm, type PeerStormResult } from './peer-storm.js';
import { startRedisServer, type RunningRedis } from './redis-server.js';

/** Each selected peer's storm, then the same storm with the peer SIGKILLed a third of the way. */
export async function runPeers(ctx: PhaseContext, kinds: readonly PeerKind[]): Promise<PeerStormResult[]> {
  const { options } = ctx;
  const redis: RunningRedis | undefined = kinds.includes('redis')
    ? await startRedisServer(options.ports.redis, join(options.outDir, 'logs'))
    : undefined;
  // The crash runs wait for what a dead consumer left behind (a visibility timeout, a job lock): bounded.
  const settleBoundS = options.quick ? 60 : 180;
  const results: PeerStormResult[] = [];
  try {
    for (const kind of kinds)
      for (const crash of [false, true])
        results.push(
          await runPeerStorm(ctx, kind, { crash, redisUrl: redis?.url, redisPid: redis?.process.pid, settleBoundS }),
        );
  } finally {
    await redis?.stop();
  }
  return results;
}
