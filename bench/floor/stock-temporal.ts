import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTemporalServer, TEMPORAL_SERVER_MISSING } from '../../dev/temporal-binaries.js';
import { startTemporal } from '../../dev/temporal/start.js';
import { freeServerPorts } from '../../dev/temporal/server.js';
import type { FloorServer } from './floor.js';

/**
 * A Temporal Server of the floor's own on Temporal's stock dynamic config (the stack's runs the
 * project's): the same binaries, server.yaml and SQLite store as the stack's, on free loopback
 * ports, its file in a temp directory. The floor runs on it in the same bench run, to show what the
 * project's tuning buys.
 */
export interface FloorTemporal extends FloorServer {
  dynamicConfig: 'stock';
  stop(): Promise<void>;
}

export async function startStockTemporal(logDir: string): Promise<FloorTemporal> {
  const binaries = await resolveTemporalServer();
  if (binaries === undefined) throw new Error(TEMPORAL_SERVER_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'bench-stock-temporal-'));
  const ownLogs = join(logDir, 'stock-temporal');
  await mkdir(ownLogs, { recursive: true });
  const running = await startTemporal({
    binaries,
    persistence: { kind: 'sqlite', file: join(dir, 'temporal-server.sqlite') },
    ports: await freeServerPorts(),
    namespace: 'default',
    logDir: ownLogs,
    dynamicConfig: 'stock',
  });
  return {
    address: running.address,
    pids: running.server.running().map((p) => p.pid),
    dynamicConfig: 'stock',
    async stop() {
      await running.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
