import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installDebianTool, type DebianTool } from '../../dev/debian-tools.js';
import { startProcess, type ManagedProcess } from '../../dev/managed-process.js';
import { waitForPort } from '../../dev/ports.js';

/**
 * The Redis peer's server: Debian's redis-server (installed with apt-get when missing, as the tests
 * install chromium), on a loopback port with its files in a temp directory. Persistence as the
 * design would run it in production: an append-only file, fsynced every second.
 */
export const REDIS_SERVER: DebianTool = {
  package: 'redis-server',
  path: '/usr/bin/redis-server',
  neededBy: "the bench's Redis peer",
};

export interface RunningRedis {
  url: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startRedisServer(port: number, logDir: string): Promise<RunningRedis> {
  const tool = installDebianTool(REDIS_SERVER);
  if ('skip' in tool) throw new Error(tool.skip);
  const dir = await mkdtemp(join(tmpdir(), 'bench-redis-'));
  const proc = startProcess({
    name: 'redis-server',
    command: tool.path,
    args: [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
    ],
    logFile: join(logDir, 'redis.log'),
  });
  const up = await Promise.race([waitForPort('127.0.0.1', port, 15_000), proc.exited.then(() => false)]);
  if (!up) {
    await proc.stop();
    throw new Error(`redis-server did not listen on 127.0.0.1:${port}; see ${join(logDir, 'redis.log')}`);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    process: proc,
    async stop() {
      await proc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
