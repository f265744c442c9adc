import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningSecret } from '../../webhooks/signing.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/**
 * worker/main.ts in its own process, its PostgreSQL behind a proxy the test takes down while a
 * webhook job finishes: the send got its answer, then neither the delivery nor the job's end can be
 * recorded. graphile-worker records a job's end without awaiting it; the process must live on and
 * its queue resume once PostgreSQL is back.
 */
const TASK_QUEUE = 'orders-job-queue-outage';
let h: OrderHarness;
let worker: WorkerProcess;
let receiver: Server;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
/** Called with each request's number before it is answered 200. */
let beforeAnswer: (n: number) => Promise<void> = async () => {};

beforeAll(async () => {
  h = await startOrderHarness({
    temporal: 'real',
    taskQueue: TASK_QUEUE,
    inProcessWorker: false,
    workerDatabaseProxy: true,
  });
  const proxied = new URL(h.databaseUrl);
  proxied.port = String(h.workerDatabase!.port);
  worker = await startWorkerProcess(h, TASK_QUEUE, {
    DATABASE_URL: proxied.toString(),
    WEBHOOK_POLL_INTERVAL: '200ms',
  });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      void beforeAnswer(received.length).then(() => res.writeHead(200).end());
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
}, 150_000);

afterAll(async () => {
  receiver?.closeAllConnections();
  receiver?.close();
  await worker?.stop();
  await h?.close();
});

const exited = () => worker.child.exitCode !== null || worker.child.signalCode !== null;

describe('the worker when PostgreSQL is lost as a queue job finishes', () => {
  it('lives on; once PostgreSQL is back the job runs again and its delivery is recorded, and new events flow', async () => {
    const secret = newSigningSecret();
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    const endpoint = await h.db.webhookEndpoint.create({
      data: { url, eventTypes: ['order.refund_failed'], secret },
    });
    // The first request is answered only once the worker's PostgreSQL is gone.
    beforeAnswer = async (n) => {
      if (n === 1) await h.workerDatabase!.down();
    };
    const first = { id: randomUUID(), orderId: randomUUID(), seq: 1, type: 'order.refund_failed', data: {} };
    await h.db.orderEvent.create({ data: first });
    await eventually(async () => received.length === 1, 30_000);
    // The send's end is being recorded against a database that is not there: the process either
    // ends on it or says it restarts its runner.
    await eventually(
      async () => exited() || worker.lines.some((l) => l.includes('its runner restarts once PostgreSQL answers')),
      20_000,
    );
    await h.workerDatabase!.up();

    expect(exited()).toBe(false);
    const delivery = await h.db.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    const delivered = async () =>
      (await h.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status === 'DELIVERED';
    await eventually(delivered, 30_000);
    // The job ends after the send recorded its delivery, in graphile-worker's own statement.
    const jobGone = async () =>
      (
        await h.db.$queryRaw<unknown[]>`
          SELECT 1 FROM graphile_worker.jobs WHERE key = ${`webhook_send:${delivery.id}`}`
      ).length === 0;
    await eventually(jobGone, 10_000);
    // At least once: the send whose end was lost ran again, the same event (same webhook-id).
    expect(received.length).toBeGreaterThanOrEqual(2);
    for (const r of received) {
      expect(r.headers['webhook-id']).toBe(first.id);
      expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toMatchObject({
        type: 'order.refund_failed',
      });
    }

    // The queue runs on: a new event reaches the endpoint.
    const second = { id: randomUUID(), orderId: first.orderId, seq: 2, type: 'order.refund_failed', data: {} };
    await h.db.orderEvent.create({ data: second });
    await eventually(async () => received.some((r) => r.headers['webhook-id'] === second.id), 20_000);
    expect(exited()).toBe(false);
  });
});
