import { Redis } from 'ioredis';
import type { PeerKind } from './kinds.js';
import { GraphileDeadlines } from './graphile.js';
import { RedisDeadlines } from './redis-deadlines.js';

/**
 * The placement side of a peer, in the bench's process: an order's deadline handed to the peer
 * when the order is placed, taken back when it is paid. The scan job needs neither: it reads the
 * orders table itself.
 */
export interface PeerDeadlines {
  schedule(orderId: string, expiresAtMs: number): Promise<void>;
  forget(orderId: string): Promise<void>;
  close(): Promise<void>;
}

export async function peerDeadlines(
  kind: PeerKind,
  where: { databaseUrl: string; redisUrl: string | undefined },
): Promise<PeerDeadlines> {
  switch (kind) {
    case 'scan':
      return { schedule: async () => undefined, forget: async () => undefined, close: async () => undefined };
    case 'redis': {
      const redis = new Redis(where.redisUrl!);
      const deadlines = new RedisDeadlines(redis);
      return {
        schedule: (id, at) => deadlines.schedule(id, at),
        forget: (id) => deadlines.forget(id),
        close: async () => void redis.disconnect(),
      };
    }
    case 'graphile':
      return GraphileDeadlines.connect(where.databaseUrl);
  }
}
