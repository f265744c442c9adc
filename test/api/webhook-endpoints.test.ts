import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../lib/config/webhooks.js';
import { SEND_TASK } from '../../store/webhook-deliveries.js';
import { ADMIN_TOKEN, appWithoutBackends, listening } from '../helpers/app-without-backends.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** The operators' webhook endpoints and deliveries, on a real database (no job runs here: the queue is only read). */
let db: TestDatabase;
let app: Express;
const OVERLAP_MS = 3_600_000;

beforeAll(async () => {
  db = await createTestDatabase();
  app = appWithoutBackends({
    faultsEnabled: false,
    db: db.prisma,
    webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, allowHttpLoopback: true, secretOverlapMs: OVERLAP_MS },
  });
});
afterAll(async () => {
  await db?.drop();
});

async function call(method: string, path: string, body?: unknown, on: Express = app) {
  return listening(on, async (base) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
  });
}

const HOOK = 'https://erp.example.com/hooks/orders';

describe('webhook endpoints', () => {
  it('creates one and answers its secret once; the listing shows no secret', async () => {
    const created = await call('POST', '/webhook-endpoints', { url: HOOK, eventTypes: ['order.paid'] });
    expect(created.status).toBe(201);
    expect(created.body!.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.body!.endpoint).toMatchObject({ url: HOOK, eventTypes: ['order.paid'], enabled: true });
    const stored = await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.body!.endpoint.id } });
    expect(stored.secret).toBe(created.body!.secret);

    const listed = await call('GET', '/webhook-endpoints');
    expect(listed.status).toBe(200);
    expect(listed.body!.endpoints.map((e: { id: string }) => e.id)).toContain(stored.id);
    expect(listed.text).not.toContain(stored.secret);
    expect(listed.text).not.toMatch(/secret"/i);
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const before = await db.prisma.webhookEndpoint.count();
    const refusals: [unknown, string][] = [
      [{ url: 'http://erp.example.com/hooks', eventTypes: ['order.paid'] }, 'url'],
      [{ url: 'https://user:pw@erp.example.com/hooks', eventTypes: ['order.paid'] }, 'url'],
      [{ url: 'ftp://erp.example.com/hooks', eventTypes: ['order.paid'] }, 'url'],
      [{ url: 'not a url', eventTypes: ['order.paid'] }, 'url'],
      [{ url: HOOK, eventTypes: ['order.shipped'] }, 'eventTypes.0'],
      [{ url: HOOK, eventTypes: [] }, 'eventTypes'],
      [{ url: HOOK, eventTypes: ['order.paid', 'order.paid'] }, 'eventTypes'],
      [{ url: HOOK, eventTypes: ['order.paid'], secret: 'whsec_mine' }, ''],
    ];
    for (const [body, path] of refusals) {
      const res = await call('POST', '/webhook-endpoints', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body!.error.code).toBe('VALIDATION_FAILED');
      expect(res.body!.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    // Plain http to this machine only where the setting allows it.
    const strict = appWithoutBackends({ faultsEnabled: false, db: db.prisma });
    const loopback = { url: 'http://127.0.0.1:9999/hook', eventTypes: ['order.paid'] };
    expect((await call('POST', '/webhook-endpoints', loopback, strict)).status).toBe(400);
    expect(await db.prisma.webhookEndpoint.count()).toBe(before);
    expect((await call('POST', '/webhook-endpoints', loopback)).status).toBe(201);
  });

  it('updates url, event types and enabled; an unknown id is 404, a bad url changes nothing', async () => {
    const { body } = await call('POST', '/webhook-endpoints', { url: HOOK, eventTypes: ['order.paid'] });
    const id = body!.endpoint.id as string;
    const update = {
      url: 'https://invoices.example.com/in',
      eventTypes: ['order.paid', 'order.refunded'],
      enabled: false,
      fulfillmentStep: null,
    };
    const updated = await call('PUT', `/webhook-endpoints/${id}`, update);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject(update);

    const refused = await call('PUT', `/webhook-endpoints/${id}`, { ...update, url: 'http://invoices.example.com/in' });
    expect(refused.status).toBe(400);
    expect(await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).toMatchObject(update);

    const { url, eventTypes } = update;
    expect((await call('PUT', `/webhook-endpoints/${id}`, { url, eventTypes })).status).toBe(400);
    expect((await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).enabled).toBe(false);

    const unknown = await call('PUT', `/webhook-endpoints/${randomUUID()}`, update);
    expect(unknown.status).toBe(404);
    expect(unknown.body!.error.code).toBe('UNKNOWN_WEBHOOK_ENDPOINT');
  });

  it('gives an endpoint a fulfilment role, shown in the listing; a PUT must state it; notification is no role', async () => {
    const created = await call('POST', '/webhook-endpoints', {
      url: HOOK,
      eventTypes: ['order.paid', 'order.refunded'],
      fulfillmentStep: 'invoice',
    });
    expect(created.status).toBe(201);
    expect(created.body!.endpoint.fulfillmentStep).toBe('invoice');
    const id = created.body!.endpoint.id as string;
    expect(await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).toMatchObject({
      fulfillmentStep: 'INVOICE',
    });
    const withoutRole = await call('POST', '/webhook-endpoints', { url: HOOK, eventTypes: ['order.paid'] });
    expect(withoutRole.body!.endpoint.fulfillmentStep).toBeNull();

    const listed = await call('GET', '/webhook-endpoints');
    expect(listed.body!.endpoints.find((e: { id: string }) => e.id === id)).toMatchObject({
      fulfillmentStep: 'invoice',
    });

    const change = { url: HOOK, eventTypes: ['order.paid'], enabled: true };
    const left = await call('PUT', `/webhook-endpoints/${id}`, change);
    expect(left.status).toBe(400);
    expect(left.body!.error.details.issues.map((i: { path: string }) => i.path)).toContain('fulfillmentStep');
    const before = await db.prisma.webhookEndpoint.count();
    for (const bad of ['notification', 'INVOICE', 'shipping']) {
      const refused = await call('PUT', `/webhook-endpoints/${id}`, { ...change, fulfillmentStep: bad });
      expect(refused.status, bad).toBe(400);
      expect(refused.body!.error.details.issues.map((i: { path: string }) => i.path)).toContain('fulfillmentStep');
      expect((await call('POST', '/webhook-endpoints', { ...change, fulfillmentStep: bad })).status).toBe(400);
    }
    expect(await db.prisma.webhookEndpoint.count()).toBe(before);
    expect((await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).fulfillmentStep).toBe('INVOICE');

    const moved = await call('PUT', `/webhook-endpoints/${id}`, { ...change, fulfillmentStep: 'loyalty' });
    expect(moved.body).toMatchObject({ fulfillmentStep: 'loyalty' });
    const cleared = await call('PUT', `/webhook-endpoints/${id}`, { ...change, fulfillmentStep: null });
    expect(cleared.body).toMatchObject({ fulfillmentStep: null });
    const rotated = await call('POST', `/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.body!.endpoint).toMatchObject({ fulfillmentStep: null });
  });

  it('rotates the secret: a new one answered once, the old one kept to sign beside it until the overlap ends', async () => {
    const { body } = await call('POST', '/webhook-endpoints', { url: HOOK, eventTypes: ['order.paid'] });
    const id = body!.endpoint.id as string;
    const rotated = await call('POST', `/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body!.secret).toMatch(/^whsec_/);
    expect(rotated.body!.secret).not.toBe(body!.secret);
    const stored = await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    expect(stored).toMatchObject({ secret: rotated.body!.secret, previousSecret: body!.secret });
    const expires = Date.parse(rotated.body!.endpoint.previousSecretExpiresAt);
    expect(Math.abs(expires - (Date.now() + OVERLAP_MS))).toBeLessThan(60_000);
    expect(stored.previousSecretExpiresAt!.getTime()).toBe(expires);
    expect((await call('POST', `/webhook-endpoints/${randomUUID()}/rotate-secret`)).status).toBe(404);
  });

  it('lists deliveries by status and endpoint; redelivers a DEAD one (its send job queued), refuses a PENDING one', async () => {
    const { body } = await call('POST', '/webhook-endpoints', { url: HOOK, eventTypes: ['order.cancelled'] });
    const endpointId = body!.endpoint.id as string;
    const orderId = randomUUID();
    const events = [1, 2].map((seq) => ({
      id: randomUUID(),
      orderId,
      seq,
      type: 'order.cancelled',
      data: { orderId },
    }));
    await db.prisma.orderEvent.createMany({ data: events });
    // Written by hand as the fan-out would, one of them dead already.
    const [dead, pending] = await Promise.all(
      events.map((e, i) =>
        db.prisma.webhookDelivery
          .upsert({
            where: { eventId_endpointId: { eventId: e.id, endpointId } },
            create: { eventId: e.id, endpointId },
            update: {},
          })
          .then((d) =>
            i === 0
              ? db.prisma.webhookDelivery.update({
                  where: { id: d.id },
                  data: {
                    attempts: 21,
                    lastStatusCode: 500,
                    lastError: 'the endpoint answered 500',
                    deadAt: new Date(),
                    status: 'DEAD',
                  },
                })
              : d,
          ),
      ),
    );

    const listed = await call('GET', `/webhook-deliveries?status=DEAD&endpointId=${endpointId}`);
    expect(listed.status).toBe(200);
    expect(listed.body!.deliveries).toEqual([
      expect.objectContaining({ id: dead!.id, eventId: events[0]!.id, orderId, seq: 1, status: 'DEAD', attempts: 21 }),
    ]);
    const ofEndpoint = await call('GET', `/webhook-deliveries?endpointId=${endpointId}`);
    expect(ofEndpoint.body!.deliveries.map((d: { id: string }) => d.id).sort()).toEqual([dead!.id, pending!.id].sort());
    expect((await call('GET', '/webhook-deliveries?status=LOST')).status).toBe(400);

    const redelivered = await call('POST', `/webhook-deliveries/${dead!.id}/redeliver`);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toEqual({ deliveryId: dead!.id, status: 'PENDING' });
    expect(await db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: dead!.id } })).toMatchObject({
      status: 'PENDING',
      attempts: 0,
      deadAt: null,
      lastError: null,
    });
    const jobs = await db.prisma.$queryRaw<{ key: string; max_attempts: number; queue_name: string }[]>`
      SELECT key, max_attempts, queue_name FROM graphile_worker.jobs WHERE task_identifier = ${SEND_TASK}`;
    expect(jobs).toEqual([
      {
        key: `webhook_send:${dead!.id}`,
        max_attempts: DEFAULT_WEBHOOK_SETTINGS.maxAttempts,
        queue_name: expect.stringMatching(new RegExp(`^webhook:${endpointId}:[01]$`)),
      },
    ]);

    const again = await call('POST', `/webhook-deliveries/${dead!.id}/redeliver`);
    expect(again.status).toBe(409);
    expect(again.body!.error.code).toBe('WEBHOOK_DELIVERY_PENDING');
    expect((await call('POST', `/webhook-deliveries/${randomUUID()}/redeliver`)).status).toBe(404);
  });

  it('deletes an endpoint with its deliveries; a second delete is 404', async () => {
    const { body } = await call('POST', '/webhook-endpoints', { url: HOOK, eventTypes: ['order.placed'] });
    const id = body!.endpoint.id as string;
    const eventId = randomUUID();
    await db.prisma.orderEvent.create({
      data: { id: eventId, orderId: randomUUID(), seq: 1, type: 'order.placed', data: {} },
    });
    await db.prisma.webhookDelivery.upsert({
      where: { eventId_endpointId: { eventId, endpointId: id } },
      create: { eventId, endpointId: id },
      update: {},
    });
    const deleted = await call('DELETE', `/webhook-endpoints/${id}`);
    expect(deleted.status).toBe(204);
    expect(await db.prisma.webhookDelivery.count({ where: { endpointId: id } })).toBe(0);
    expect((await call('DELETE', `/webhook-endpoints/${id}`)).status).toBe(404);
  });

  it('is for operators only', async () => {
    const res = await listening(app, (base) => fetch(`${base}/webhook-endpoints`));
    expect(res.status).toBe(401);
  });
});
