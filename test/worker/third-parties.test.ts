import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { SERVICE_SECRETS } from '../helpers/service-secrets.js';

/**
 * worker/main.ts never runs without third parties it was told to use: no real provider client
 * exists, so without THIRD_PARTIES=fake it refuses, and with it the database must have the fakes'
 * schema. Each refusal is one log line, before the worker reaches Temporal (nothing listens there).
 */
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

function runWorker(
  entry: string,
  env: Record<string, string>,
): { status: number | null; lines: Array<Record<string, unknown>> } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', entry], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      ...SERVICE_SECRETS,
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      LOG_LEVEL: 'info',
      ...env,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = run.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: run.status, lines };
}

it('refuses to start without THIRD_PARTIES, saying no provider is configured and how to choose Stripe or the fakes', () => {
  const { status, lines } = runWorker('worker/main.ts', {});
  expect(status).toBe(1);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    level: 50,
    msg: expect.stringMatching(
      /^THIRD_PARTIES: no payment provider is configured; set THIRD_PARTIES=stripe .*THIRD_PARTIES=fake/,
    ),
  });
}, 90_000);

it("the local stack's worker refuses a database without the fakes' schema, naming the command that creates it", async () => {
  await database.prisma.$executeRaw`DROP SCHEMA fakes CASCADE`;
  const { status, lines } = runWorker('dev/worker.ts', { THIRD_PARTIES: 'fake' });
  expect(status).toBe(1);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    level: 50,
    msg: expect.stringContaining('no `fakes` schema: create it with `npm run db:fakes`'),
  });
}, 90_000);
