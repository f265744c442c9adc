import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config/index.js';
import { startJobRunner, type JobRunner } from '../../lib/job-queue.js';
import { createLogger } from '../../lib/logger.js';
import { newSigningSecret } from '../../webhooks/signing.js';
import { createWebhookTasks } from '../../webhooks/tasks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { verifiedSeqsByOrder } from '../helpers/webhook-receiver.js';

/**
 * A receiver that answers 500 for ten minutes, then recovers, against the service's own webhook
 * settings (WEBHOOK_MAX_ATTEMPTS and the rest at their defaults) and graphile-worker's real backoff
 * on a real PostgreSQL, without waiting ten minutes: whenever every job is waiting for its retry, the
 * test moves every job's run_at earlier by the same amount, the wait until the soonest is due, which
 * is what waiting would have done, and adds that amount to the receiver's clock. The receiver judges
 * by that clock: wall time plus the time skipped.
 */
const TEN_MINUTES_MS = 10 * 60_000;
const settings = loadConfig({}).webhooks;
let db: TestDatabase;
let runner: JobRunner;
let server: Server;
let skippedMs = 0;
const clock = () => Date.now() + skippedMs;
let downSince: number | undefined;
const requests: { headers: IncomingHttpHeaders; body: string; status: number; at: number }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  runner = await startJobRunner({
    connectionString: db.url,
    concurrency: settings.concurrency,
    pollIntervalMs: 100,
    staleLockMs: settings.staleLockMs,
    taskList: createWebhookTasks({
      settings,
      logger: createLogger('test', 'silent'),
      deadDeliveries: new Counter({ name: 'dead', help: 'dead', labelNames: ['type'], registers: [new Registry()] }),
    }),
    logger: createLogger('test', 'silent'),
  });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const at = clock();
      downSince ??= at;
      const status = at - downSince < TEN_MINUTES_MS ? 500 : 204;
      requests.push({ headers: req.headers, body, status, at });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await runner?.stop();
  await db?.drop();
});

interface SendJob {
  id: string;
  locked: boolean;
  /** Until it is due, by PostgreSQL's clock (negative: due). */
  dueInMs: number;
}

it('a receiver that answers 500 for ten minutes and then recovers gets every event, each order without a gap', async () => {
  const secret = newSigningSecret();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const endpoint = await db.prisma.webhookEndpoint.create({ data: { url, eventTypes: ['order.paid'], secret } });
  const orders = [randomUUID(), randomUUID(), randomUUID()];
  const written: string[] = [];
  for (let seq = 1; seq <= 3; seq++)
    for (const orderId of orders) {
      const id = randomUUID();
      await db.prisma.orderEvent.create({ data: { id, orderId, seq, type: 'order.paid', data: { orderId } } });
      written.push(id);
    }
  await eventually(async () => (await db.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })) === 9);
  const sendJobs = () =>
    db.prisma.$queryRaw<SendJob[]>`
      SELECT j.id::text, j.locked_at IS NOT NULL AS locked,
             (extract(epoch FROM j.run_at - now()) * 1000)::float8 AS "dueInMs"
        FROM graphile_worker.jobs j
        JOIN webhook_deliveries d ON j.key = 'webhook_send:' || d.id
       WHERE d.endpoint_id = ${endpoint.id}::uuid`;

  // Until every send job has ended (delivered, or DEAD after its last attempt).
  for (;;) {
    // Every job left has failed its attempt and waits for its retry.
    let waiting: SendJob[] = [];
    await eventually(async () => {
      waiting = await sendJobs();
      return waiting.every((j) => !j.locked && j.dueInMs > 0);
    }, 30_000);
    if (waiting.length === 0) break;
    const skip = Math.floor(Math.min(...waiting.map((j) => j.dueInMs)));
    await db.prisma.$executeRaw`
      UPDATE graphile_worker._private_jobs SET run_at = run_at - ${skip} * interval '1 millisecond'
       WHERE id = ANY(${waiting.map((j) => j.id)}::bigint[])`;
    skippedMs += skip;
  }

  const deliveries = await db.prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
  // graphile-worker's backoff (e^1 + … + e^6 s = 636 s) puts the seventh attempt past ten minutes.
  for (const d of deliveries) expect(d).toMatchObject({ status: 'DELIVERED', attempts: 7, deadAt: null });
  expect(settings.maxAttempts).toBeGreaterThan(7);
  const failed = requests.filter((r) => r.status === 500);
  const accepted = requests.filter((r) => r.status === 204);
  expect(failed).toHaveLength(9 * 6);
  expect(Math.max(...failed.map((r) => r.at)) - downSince!).toBeLessThan(TEN_MINUTES_MS);
  expect(Math.min(...accepted.map((r) => r.at)) - downSince!).toBeGreaterThanOrEqual(TEN_MINUTES_MS);
  // Each event once, signed; each order's seqs 1..3.
  expect(accepted.map((r) => r.headers['webhook-id']).sort()).toEqual([...written].sort());
  const seqs = verifiedSeqsByOrder(accepted, secret);
  for (const orderId of orders) expect(seqs.get(orderId)).toEqual([1, 2, 3]);
});
