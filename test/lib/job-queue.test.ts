import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { startJobRunner } from '../../lib/job-queue.js';
import { createLogger } from '../../lib/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * The job runner on a real PostgreSQL reached through a proxy the test cuts: graphile-worker
 * records a job's end without awaiting it, so the end of a job that returns as the database goes
 * away is a rejection nothing handles.
 */
let db: TestDatabase;
let proxy: TcpProxy;
let proxiedUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
  url.port = String(proxy.port);
  proxiedUrl = url.toString();
});
afterAll(async () => {
  await proxy?.close();
  await db?.drop();
});

describe('the job runner', () => {
  it("runs a job again on a restarted runner once PostgreSQL is back, when the job's completion was lost", async () => {
    const runs: number[] = [];
    const runner = await startJobRunner({
      connectionString: proxiedUrl,
      concurrency: 2,
      pollIntervalMs: 100,
      // Nothing is released for being locked long: only the restart can free the job in time.
      staleLockMs: 3_600_000,
      taskList: {
        // Succeeds, as PostgreSQL goes away: graphile-worker then fails to delete the job.
        finishes_as_the_database_goes: async () => {
          runs.push(Date.now());
          if (runs.length === 1) await proxy.down();
        },
      },
      logger: createLogger('test', 'silent'),
    });
    try {
      await db.prisma.$executeRaw`SELECT graphile_worker.add_job('finishes_as_the_database_goes', '{}'::json)`;
      await eventually(async () => runs.length === 1);
      await setTimeout(1_000);
      await proxy.up();
      const left = () =>
        db.prisma.$queryRaw<unknown[]>`
          SELECT 1 FROM graphile_worker.jobs WHERE task_identifier = 'finishes_as_the_database_goes'`;
      await eventually(async () => (await left()).length === 0, 20_000);
      expect(runs).toHaveLength(2); // at least once: its completion was lost, so it ran again
    } finally {
      await runner.stop();
    }
  });

  it('lets any other unhandled rejection end the process, as Node does', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { startJobRunner } from './lib/job-queue.js';
         import { createLogger } from './lib/logger.js';
         await startJobRunner({ connectionString: process.env.QUEUE_URL, concurrency: 1, pollIntervalMs: 100,
           staleLockMs: 3600000, taskList: {}, logger: createLogger('test', 'silent') });
         Promise.reject(new Error('a rejection of some other code'));
         setTimeout(() => { console.log('still running'); process.exit(0); }, 5000);`,
      ],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, QUEUE_URL: db.url } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(stdout).not.toContain('still running');
    expect(code).toBe(1);
    expect(stderr).toContain('a rejection of some other code');
  });
});
