import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { SERVICE_SECRETS } from '../helpers/service-secrets.js';

/**
 * The service's worker (worker/main.ts) runs on its production third parties only, and refuses to
 * start without their settings; the local stack's (dev/worker.ts) on the fakes, which need their
 * schema. Each refusal is one log line, before the worker reaches Temporal (nothing listens there).
 */
const STRIPE = {
  STRIPE_SECRET_KEY: 'sk_test_third_parties_0123456789abcdefghij',
  STRIPE_WEBHOOK_SECRET: 'whsec_third_parties_0123456789abcdefghijkl',
};
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

it.each([
  ['without THIRD_PARTIES', {}],
  ['on THIRD_PARTIES=fake', { THIRD_PARTIES: 'fake' }],
])(
  'the service refuses to start %s, naming Stripe and where the fakes run',
  (_, env) => {
    const { status, lines } = runWorker('worker/main.ts', env);
    expect(status).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: expect.stringMatching(
        /^THIRD_PARTIES(=fake)?: the worker takes payments through Stripe only; set THIRD_PARTIES=stripe .*the local fakes run only on npm start's stack/,
      ),
    });
  },
  90_000,
);

it('the service refuses to start on Stripe without a mail server for the notices, naming SMTP_URL', () => {
  const { status, lines } = runWorker('worker/main.ts', { THIRD_PARTIES: 'stripe', ...STRIPE });
  expect(status).toBe(1);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    level: 50,
    msg: expect.stringMatching(
      /^SMTP_URL: the worker sends the customers' notices by email; set SMTP_URL and MAIL_FROM/,
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
