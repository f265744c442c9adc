import { Writable } from 'node:stream';
import { setTimeout } from 'node:timers/promises';
import { Counter, Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId } from '../../domain/messages.js';
import type { OrderEventType } from '../../domain/order-events.js';
import { startJobRunner, type JobRunner } from '../../lib/job-queue.js';
import { createLogger } from '../../lib/logger.js';
import { newSigningSecret } from '../../webhooks/signing.js';
import { createWebhookFulfillmentServices } from '../../webhooks/fulfillment-services.js';
import { createWebhookTasks } from '../../webhooks/tasks.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { Receiver } from '../helpers/webhook-receiver.js';

/**
 * Invoicing and loyalty as deliveries of order.paid: the whole service on the time-skipping server
 * and a real database, the fulfilment steps calling the production adapter, which posts to loopback
 * receivers that verify every request with the Standard Webhooks library. The webhooks' job runner
 * runs beside it, as in the worker, so the general deliveries reach the same receivers.
 */
let h: OrderHarness;
let runner: JobRunner;
const logLines: string[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-webhook-fulfillment' });
  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  const services = createWebhookFulfillmentServices({
    pool: h.db.pool,
    timeoutMs: 2_000,
    logger: createLogger('worker-test', 'warn', logs),
  });
  h.thirdParties.invoices = services.invoices;
  h.thirdParties.loyalty = services.loyalty;
  runner = await startJobRunner({
    connectionString: h.databaseUrl,
    concurrency: 4,
    pollIntervalMs: 100,
    staleLockMs: 60_000,
    taskList: createWebhookTasks({
      settings: { maxAttempts: 3, timeoutMs: 2_000, parallelPerEndpoint: 1 },
      logger: createLogger('job-test', 'silent'),
      deadDeliveries: new Counter({ name: 'dead', help: 'dead', labelNames: ['type'], registers: [new Registry()] }),
    }),
    logger: createLogger('job-test', 'silent'),
  });
});
afterEach(async () => {
  await h.db.webhookEndpoint.deleteMany({});
});
afterAll(async () => {
  await runner?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await h?.close();
});

async function receiver(answer: (n: number) => number): Promise<Receiver> {
  const r = await Receiver.start(answer);
  receivers.push(r);
  return r;
}

async function roleEndpoint(
  r: Receiver,
  fulfillmentStep: 'INVOICE' | 'LOYALTY',
  enabled = true,
  eventTypes: OrderEventType[] = ['order.paid'],
) {
  const secret = newSigningSecret();
  await h.db.webhookEndpoint.create({
    data: { url: r.url, eventTypes, fulfillmentStep, enabled, secret },
  });
  return secret;
}

async function paidOrder() {
  const { sku } = await seedCatalog(h);
  const order = await placeOrder(h, { sku });
  const paid = await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents });
  expect(paid.status).toBe(202);
  return order;
}

const paidEventOf = (orderId: string) =>
  h.db.orderEvent.findFirstOrThrow({ where: { orderId, type: 'order.paid' }, select: { id: true, seq: true } });
const stepRow = (orderId: string, step: 'INVOICE' | 'LOYALTY') =>
  h.db.fulfillmentRecord.findFirst({ where: { orderId, step } });
const workflow = (orderId: string) => h.env.client.workflow.getHandle(orderWorkflowId(orderId));

/** Each request verified with the endpoint's secret (the library throws on a bad signature). */
function verified(r: Receiver, secret: string) {
  return r.received.map((got) => ({
    webhookId: got.headers['webhook-id'],
    payload: new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as {
      type: string;
      data: { orderId: string; amountCents: number; seq: number };
    },
  }));
}

describe('invoicing and loyalty as deliveries of order.paid', () => {
  it('the invoice step delivers order.paid once, signed, to the invoice endpoint; loyalty to its own', async () => {
    const invoicing = await receiver(() => 204);
    const loyalty = await receiver(() => 200);
    const invoiceSecret = await roleEndpoint(invoicing, 'INVOICE');
    const loyaltySecret = await roleEndpoint(loyalty, 'LOYALTY');
    const disabled = await receiver(() => 204);
    await roleEndpoint(disabled, 'INVOICE', false);
    const order = await paidOrder();

    expect((await workflow(order.id).result()).fulfillment).toEqual({
      invoice: 'DONE',
      notification: 'DONE',
      loyalty: 'DONE',
    });
    const paid = await paidEventOf(order.id);
    for (const [r, secret] of [
      [invoicing, invoiceSecret],
      [loyalty, loyaltySecret],
    ] as const) {
      const got = verified(r, secret);
      expect(got).toHaveLength(1);
      expect(got[0]!.webhookId).toBe(paid.id);
      expect(got[0]!.payload).toMatchObject({
        type: 'order.paid',
        data: { orderId: order.id, amountCents: order.totalCents, seq: paid.seq },
      });
    }
    expect(disabled.received).toEqual([]);
    expect(await stepRow(order.id, 'INVOICE')).toMatchObject({ status: 'DONE', attempts: 1 });
  });

  it('an invoicing system that also hears of every event gets order.paid once, from its step, and the others from the queue', async () => {
    const invoicing = await receiver(() => 204);
    const secret = await roleEndpoint(invoicing, 'INVOICE', true, [
      'order.placed',
      'order.paid',
      'order.fulfillment_step_done',
    ]);
    const order = await paidOrder();
    expect((await workflow(order.id).result()).fulfillment.invoice).toBe('DONE');
    // placed, paid, and one fulfillment_step_done per step.
    await eventually(async () => invoicing.received.length >= 5);
    await setTimeout(1_000); // a second order.paid, if one were on its way, would be here by now
    const types = verified(invoicing, secret).map((g) => g.payload.type);
    expect(types.filter((t) => t === 'order.paid')).toHaveLength(1);
    expect(types.sort()).toEqual([
      'order.fulfillment_step_done',
      'order.fulfillment_step_done',
      'order.fulfillment_step_done',
      'order.paid',
      'order.placed',
    ]);
    const deliveries = await h.db.webhookDelivery.findMany({
      include: { event: { select: { orderId: true, type: true } } },
    });
    expect(deliveries.filter((d) => d.event.orderId === order.id && d.event.type === 'order.paid')).toEqual([]);
  });

  it('an invoice endpoint answering 500 twice: the step is retried, sends to every invoice endpoint again, then done', async () => {
    const recovering = await receiver((n) => (n <= 2 ? 500 : 204));
    const steady = await receiver(() => 204);
    const recoveringSecret = await roleEndpoint(recovering, 'INVOICE');
    const steadySecret = await roleEndpoint(steady, 'INVOICE');
    await roleEndpoint(await receiver(() => 204), 'LOYALTY');
    const order = await paidOrder();

    expect((await workflow(order.id).result()).fulfillment.invoice).toBe('DONE');
    expect(await stepRow(order.id, 'INVOICE')).toMatchObject({ status: 'DONE', attempts: 3 });
    const paid = await paidEventOf(order.id);
    // Each attempt went to both; the receiver that had it already drops the copies by webhook-id.
    expect(verified(recovering, recoveringSecret).map((g) => g.webhookId)).toEqual([paid.id, paid.id, paid.id]);
    expect(verified(steady, steadySecret).map((g) => g.webhookId)).toEqual([paid.id, paid.id, paid.id]);
  });

  it('an invoice endpoint answering 400: FAILED at once; once it is fixed, an operator retry makes it DONE', async () => {
    let answer = 400;
    const invoicing = await receiver(() => answer);
    const secret = await roleEndpoint(invoicing, 'INVOICE');
    await roleEndpoint(await receiver(() => 204), 'LOYALTY');
    const order = await paidOrder();

    await eventually(async () => (await stepRow(order.id, 'INVOICE'))?.status === 'FAILED');
    expect(await stepRow(order.id, 'INVOICE')).toMatchObject({
      attempts: 1,
      lastError: expect.stringContaining('the endpoint answered 400'),
    });
    expect((await h.admin('GET', `/orders/${order.id}`)).body.fulfillment).toMatchObject({ invoice: 'FAILED' });

    answer = 204; // the invoicing system is fixed
    expect((await h.admin('POST', `/orders/${order.id}/fulfillment/invoice/retry`)).status).toBe(202);
    expect((await workflow(order.id).result()).fulfillment).toEqual({
      invoice: 'DONE',
      notification: 'DONE',
      loyalty: 'DONE',
    });
    const paid = await paidEventOf(order.id);
    expect(verified(invoicing, secret).map((g) => g.webhookId)).toEqual([paid.id, paid.id]);
  });

  it('a 429 or a refused connection is retried, not dead-lettered', async () => {
    const busy = await receiver((n) => (n === 1 ? 429 : 204));
    await roleEndpoint(busy, 'INVOICE');
    const gone = await receiver(() => 204);
    const goneUrl = gone.url;
    await gone.close();
    await h.db.webhookEndpoint.create({
      data: { url: goneUrl, eventTypes: ['order.paid'], fulfillmentStep: 'LOYALTY', secret: newSigningSecret() },
    });
    const order = await paidOrder();

    await eventually(async () => ((await stepRow(order.id, 'LOYALTY'))?.attempts ?? 0) >= 2);
    expect(await stepRow(order.id, 'LOYALTY')).toMatchObject({
      status: 'PENDING',
      lastError: null,
    });
    await eventually(async () => (await stepRow(order.id, 'INVOICE'))?.status === 'DONE');
    expect(await stepRow(order.id, 'INVOICE')).toMatchObject({ attempts: 2 });
    // The loyalty system comes back at a new address: the next attempt reaches it.
    const back = await receiver(() => 204);
    await h.db.webhookEndpoint.updateMany({ where: { url: goneUrl }, data: { url: back.url } });
    expect((await workflow(order.id).result()).fulfillment.loyalty).toBe('DONE');
    expect(back.received).toHaveLength(1);
  });

  it('no endpoint with the role: the step is done with nothing sent, and the worker says so once', async () => {
    const said = () => logLines.filter((l) => l.includes('no loyalty system registered')).length;
    const before = said(); // an earlier test without a loyalty endpoint said it too
    const invoicing = await receiver(() => 204);
    await roleEndpoint(invoicing, 'INVOICE');
    const orders = [await paidOrder(), await paidOrder()];
    for (const order of orders) expect((await workflow(order.id).result()).fulfillment.loyalty).toBe('DONE');
    expect(invoicing.received).toHaveLength(2);
    expect(said() - before).toBe(1);
  });
});
