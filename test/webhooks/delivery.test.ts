import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { Counter, Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderEventType } from '../../domain/order-events.js';
import { startJobRunner, type JobRunner } from '../../lib/job-queue.js';
import { createLogger } from '../../lib/logger.js';
import { redeliver, SEND_TASK } from '../../store/webhook-deliveries.js';
import { newSigningSecret } from '../../webhooks/signing.js';
import { createWebhookTasks } from '../../webhooks/tasks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { Receiver, verifiedSeqsByOrder } from '../helpers/webhook-receiver.js';

/**
 * Order events reach the shop's endpoints through graphile-worker: a real runner on a real
 * PostgreSQL, loopback receivers that verify each delivery with the Standard Webhooks library.
 * Events are inserted into order_events directly, as the status changes do; the trigger does the rest.
 * Three attempts here: graphile-worker waits e^1 then e^2 seconds after the first two failures.
 */
const SETTINGS = { maxAttempts: 3, timeoutMs: 1_500, parallelPerEndpoint: 1 };
let db: TestDatabase;
let runner: JobRunner;
const registry = new Registry();
const deadDeliveries = new Counter({
  name: 'dead',
  help: 'dead',
  labelNames: ['type'] as const,
  registers: [registry],
});

const receivers: Receiver[] = [];
async function receiver(answer?: (n: number) => number | 'hang'): Promise<Receiver> {
  const r = await Receiver.start(answer);
  receivers.push(r);
  return r;
}

async function endpoint(
  url: string,
  eventTypes: OrderEventType[],
  secrets: { secret?: string; previousSecret?: string; previousSecretExpiresAt?: Date } = {},
  fulfillmentStep: 'INVOICE' | 'LOYALTY' | null = null,
) {
  const secret = secrets.secret ?? newSigningSecret();
  const row = await db.prisma.webhookEndpoint.create({
    data: {
      url,
      eventTypes,
      fulfillmentStep,
      secret,
      previousSecret: secrets.previousSecret ?? null,
      previousSecretExpiresAt: secrets.previousSecretExpiresAt ?? null,
    },
  });
  return { id: row.id, secret };
}

/** An event as a status change writes it (the outbox row); the trigger enqueues its fan-out. */
async function event(type: OrderEventType, seq = 1, orderId: string = randomUUID()) {
  const id = randomUUID();
  await db.prisma.orderEvent.create({ data: { id, orderId, seq, type, data: { orderId, status: 'UNPAID' } } });
  return { id, orderId, seq };
}

const deliveriesOf = (endpointId: string) =>
  db.prisma.webhookDelivery.findMany({ where: { endpointId }, orderBy: { createdAt: 'asc' } });

const startRunner = () =>
  startJobRunner({
    connectionString: db.url,
    concurrency: 4,
    pollIntervalMs: 100,
    staleLockMs: 60_000,
    taskList: createWebhookTasks({ settings: SETTINGS, logger: createLogger('test', 'silent'), deadDeliveries }),
    logger: createLogger('test', 'silent'),
  });

beforeAll(async () => {
  db = await createTestDatabase();
  runner = await startRunner();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await runner?.stop();
  await db?.drop();
});

describe('order events as signed webhooks', () => {
  it('delivers an event once, signed (the library verifies it), with its id and seq; an endpoint not subscribed gets nothing', async () => {
    const hears = await receiver();
    const deaf = await receiver();
    const { id: endpointId, secret } = await endpoint(hears.url, ['order.placed', 'order.paid']);
    const { id: deafId } = await endpoint(deaf.url, ['order.cancelled']);
    const placed = await event('order.placed', 1);
    const paid = await event('order.paid', 2, placed.orderId);

    await eventually(async () => hears.received.length === 2, 10_000);
    const verified = hears.received.map(
      (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>,
    );
    const bySeq = verified.sort((a, b) => (a.data as { seq: number }).seq - (b.data as { seq: number }).seq);
    expect(bySeq.map((p) => [p.type, (p.data as { seq: number; orderId: string }).seq])).toEqual([
      ['order.placed', 1],
      ['order.paid', 2],
    ]);
    expect((bySeq[0]!.data as { orderId: string }).orderId).toBe(placed.orderId);
    expect(hears.received.map((r) => r.headers['webhook-id']).sort()).toEqual([placed.id, paid.id].sort());
    await eventually(async () => (await deliveriesOf(endpointId)).every((d) => d.status === 'DELIVERED'));
    expect((await deliveriesOf(endpointId)).map((d) => d.attempts)).toEqual([1, 1]);
    expect(deaf.received).toEqual([]);
    expect(await deliveriesOf(deafId)).toEqual([]);
  });

  it('an endpoint with a fulfilment role gets no order.paid from the fan-out (its step sends it), the other events it hears of as usual', async () => {
    const invoicing = await receiver();
    const erp = await receiver();
    const { id: invoicingId, secret } = await endpoint(invoicing.url, ['order.paid', 'order.refunded'], {}, 'INVOICE');
    const { id: erpId } = await endpoint(erp.url, ['order.paid']);
    const paid = await event('order.paid', 1);
    const refunded = await event('order.refunded', 2, paid.orderId);

    await eventually(async () => erp.received.length === 1 && invoicing.received.length === 1, 10_000);
    expect(erp.received[0]!.headers['webhook-id']).toBe(paid.id);
    expect(invoicing.received[0]!.headers['webhook-id']).toBe(refunded.id);
    expect(
      new Webhook(secret).verify(invoicing.received[0]!.body, invoicing.received[0]!.headers as Record<string, string>),
    ).toMatchObject({ type: 'order.refunded' });
    await eventually(async () => (await deliveriesOf(invoicingId))[0]?.status === 'DELIVERED');
    expect((await deliveriesOf(invoicingId)).map((d) => d.eventId)).toEqual([refunded.id]);
    expect((await deliveriesOf(erpId)).map((d) => d.eventId)).toEqual([paid.id]);
    // Nothing else follows: the fan-outs are done, and no send job is left for the role endpoint.
    await setTimeout(500);
    expect(invoicing.received).toHaveLength(1);
  });

  it('a receiver that answers 500 twice and then 200 gets the event, once delivered', async () => {
    const recovering = await receiver((n) => (n <= 2 ? 500 : 200));
    const { id, secret } = await endpoint(recovering.url, ['order.cancelled']);
    const cancelled = await event('order.cancelled');

    await eventually(async () => (await deliveriesOf(id))[0]?.status === 'DELIVERED', 30_000);
    expect(recovering.received).toHaveLength(3);
    for (const r of recovering.received) expect(r.headers['webhook-id']).toBe(cancelled.id);
    expect(() =>
      new Webhook(secret).verify(
        recovering.received[2]!.body,
        recovering.received[2]!.headers as Record<string, string>,
      ),
    ).not.toThrow();
    const [delivery] = await deliveriesOf(id);
    expect(delivery).toMatchObject({ attempts: 3, lastStatusCode: 200, lastError: null, deadAt: null });
    // The backoff between attempts: about e^1 and e^2 seconds.
    const gaps = recovering.received.slice(1).map((r, i) => r.at - recovering.received[i]!.at);
    expect(gaps[0]).toBeGreaterThan(2_000);
    expect(gaps[1]).toBeGreaterThan(6_000);
  });

  it('a receiver that answers 500 for a while and then recovers gets every event of a stream, each order without a gap', async () => {
    // Down for 4 s: every event's first attempt fails, its second (about e^1 s later) may, its third
    // (e^2 s after that) succeeds. The service's own setting, 21 attempts, covers an outage of about
    // three days the same way: ten minutes of 500s are over by the seventh attempt (636 s of backoff).
    const downUntil = Date.now() + 4_000;
    const recovering = await receiver(() => (Date.now() < downUntil ? 500 : 200));
    const { id, secret } = await endpoint(recovering.url, ['order.fulfillment_step_dead_lettered']);
    const orders = [randomUUID(), randomUUID(), randomUUID()];
    const written = [];
    for (let seq = 1; seq <= 3; seq++)
      for (const orderId of orders) written.push(await event('order.fulfillment_step_dead_lettered', seq, orderId));

    await eventually(
      async () => (await deliveriesOf(id)).filter((d) => d.status === 'DELIVERED').length === written.length,
      30_000,
    );
    expect((await deliveriesOf(id)).filter((d) => d.status !== 'DELIVERED')).toEqual([]);
    const accepted = recovering.received.filter((r) => r.at >= downUntil);
    expect(new Set(accepted.map((r) => r.headers['webhook-id']))).toEqual(new Set(written.map((e) => e.id)));
    const seqs = verifiedSeqsByOrder(accepted, secret);
    for (const orderId of orders) expect(seqs.get(orderId)).toEqual([1, 2, 3]);
  });

  it('one that always fails is DEAD after the last attempt, counted; redelivered by an operator, it arrives', async () => {
    const failing = await receiver(() => 503);
    const { id } = await endpoint(failing.url, ['order.refunded']);
    const refunded = await event('order.refunded');

    await eventually(async () => (await deliveriesOf(id))[0]?.status === 'DEAD', 30_000);
    const [dead] = await deliveriesOf(id);
    expect(dead).toMatchObject({ attempts: 3, lastStatusCode: 503, lastError: 'the endpoint answered 503' });
    expect(dead!.deadAt).not.toBeNull();
    expect(failing.received).toHaveLength(3);
    expect((await registry.getSingleMetric('dead')!.get()).values).toEqual([
      expect.objectContaining({ labels: { type: 'order.refunded' }, value: 1 }),
    ]);

    failing.answer = () => 200;
    const enqueued = await db.prisma.$queryRaw<{ enqueued: boolean }[]>(redeliver(dead!.id, SETTINGS));
    expect(enqueued).toEqual([{ enqueued: true }]);
    await eventually(async () => (await deliveriesOf(id))[0]?.status === 'DELIVERED', 10_000);
    expect(failing.received).toHaveLength(4);
    expect(failing.received[3]!.headers['webhook-id']).toBe(refunded.id);
    expect((await deliveriesOf(id))[0]).toMatchObject({ attempts: 1, deadAt: null, lastError: null });
  });

  it("a slow endpoint does not hold back another's deliveries", async () => {
    const slow = await receiver(() => 'hang');
    const fast = await receiver();
    const { id: slowId } = await endpoint(slow.url, ['order.fulfillment_step_done']);
    const { id: fastId } = await endpoint(fast.url, ['order.fulfillment_step_done']);
    const started = Date.now();
    for (let i = 0; i < 12; i++) await event('order.fulfillment_step_done');

    // Twelve events each, four job slots: without a lane of its own per endpoint, the slow
    // endpoint's jobs would take every slot until their timeouts.
    await eventually(async () => fast.received.length === 12, 10_000);
    const fastDone = Date.now() - started;
    expect(fastDone).toBeLessThan(SETTINGS.timeoutMs);
    expect(slow.received.length).toBeLessThanOrEqual(SETTINGS.parallelPerEndpoint);
    expect((await deliveriesOf(slowId)).filter((d) => d.attempts > 0)).toEqual([]);
    await eventually(async () => (await deliveriesOf(fastId)).filter((d) => d.status === 'DELIVERED').length === 12);
  });

  it('a send that a worker held when it died is taken over once a worker starts again', async () => {
    const r = await receiver();
    const secret = newSigningSecret();
    const eventId = randomUUID();
    const deliveryId = randomUUID();
    // What a worker killed in the middle of a send leaves: the job and its queue locked by it. Locked
    // just now first, so the running worker's own minute check cannot take it yet; then an hour ago.
    const lockedBy = (client: pg.Client, at: Date) =>
      Promise.all([
        client.query(`UPDATE graphile_worker._private_jobs SET locked_by = $1, locked_at = $2 WHERE key = $3`, [
          'worker-that-died',
          at,
          `webhook_send:${deliveryId}`,
        ]),
        client.query(
          `UPDATE graphile_worker._private_job_queues SET locked_by = $1, locked_at = $2 WHERE queue_name = 'webhook:dead'`,
          ['worker-that-died', at],
        ),
      ]);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO order_events (id, order_id, seq, type, data) VALUES ($1, $2, 1, 'order.refund_failed', '{}')`,
        [eventId, randomUUID()],
      );
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO webhook_endpoints (url, event_types, secret) VALUES ($1, '{order.refund_failed}', $2) RETURNING id`,
        [r.url, secret],
      );
      await client.query(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id) VALUES ($1, $2, $3)`, [
        deliveryId,
        eventId,
        rows[0]!.id,
      ]);
      await client.query(
        `SELECT graphile_worker.add_job($1, json_build_object('deliveryId', $2::uuid), queue_name := 'webhook:dead', job_key := $3)`,
        [SEND_TASK, deliveryId, `webhook_send:${deliveryId}`],
      );
      await lockedBy(client, new Date());
      await client.query('COMMIT');
      await setTimeout(1_500);
      expect(r.received).toEqual([]); // locked: the running worker leaves it alone

      await runner.stop();
      await lockedBy(client, new Date(Date.now() - 3_600_000));
    } finally {
      await client.end();
    }
    runner = await startRunner();
    await eventually(async () => r.received.length === 1, 10_000);
    expect(r.received[0]!.headers['webhook-id']).toBe(eventId);
    await eventually(
      async () =>
        (await db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).status === 'DELIVERED',
    );
  });

  it('during a rotation both the old and the new secret verify; once the overlap is over, only the new', async () => {
    const rotating = await receiver();
    const old = newSigningSecret();
    const { secret } = await endpoint(rotating.url, ['order.awaiting_funds'], {
      previousSecret: old,
      previousSecretExpiresAt: new Date(Date.now() + 3_600_000),
    });
    await event('order.awaiting_funds');
    await eventually(async () => rotating.received.length === 1, 10_000);
    const [during] = rotating.received;
    for (const key of [old, secret])
      expect(() => new Webhook(key).verify(during!.body, during!.headers as Record<string, string>)).not.toThrow();

    await db.prisma.webhookEndpoint.updateMany({
      where: { url: rotating.url },
      data: { previousSecretExpiresAt: new Date(Date.now() - 1) },
    });
    await event('order.awaiting_funds');
    await eventually(async () => rotating.received.length === 2, 10_000);
    const after = rotating.received[1]!;
    expect(() => new Webhook(secret).verify(after.body, after.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(old).verify(after.body, after.headers as Record<string, string>)).toThrow();
  });
});
