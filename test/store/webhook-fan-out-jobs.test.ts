import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderEventType } from '../../domain/order-events.js';
import { FAN_OUT_TASK } from '../../store/webhook-deliveries.js';
import { newSigningSecret } from '../../webhooks/signing.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The trigger that queues the webhooks' fan-out, on real PostgreSQL with no runner: an event costs
 * a job only when some endpoint will get a delivery of it, and an endpoint with a fulfilment role
 * never gets order.paid from the fan-out.
 */
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function queuedFanOuts(): Promise<string[]> {
  const { rows } = await database.prisma.pool.query<{ event_id: string }>(
    `SELECT j.payload->>'eventId' AS event_id FROM graphile_worker._private_jobs j
     JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = $1`,
    [FAN_OUT_TASK],
  );
  return rows.map((r) => r.event_id);
}

async function write(type: OrderEventType): Promise<string> {
  const id = randomUUID();
  await database.prisma.orderEvent.create({ data: { id, orderId: randomUUID(), seq: 1, type, data: {} } });
  return id;
}

describe('webhook fan-out jobs', () => {
  it('order.paid queues none when only endpoints with a fulfilment role hear of it; order.refunded does', async () => {
    await database.prisma.webhookEndpoint.create({
      data: {
        url: 'https://invoices.example.com/in',
        eventTypes: ['order.paid', 'order.refunded'],
        fulfillmentStep: 'INVOICE',
        secret: newSigningSecret(),
      },
    });
    const paid = await write('order.paid');
    const refunded = await write('order.refunded');
    expect(await queuedFanOuts()).toEqual([refunded]);

    await database.prisma.webhookEndpoint.create({
      data: { url: 'https://erp.example.com/in', eventTypes: ['order.paid'], secret: newSigningSecret() },
    });
    const paidAgain = await write('order.paid');
    expect((await queuedFanOuts()).sort()).toEqual([refunded, paidAgain].sort());
    expect(await queuedFanOuts()).not.toContain(paid);
  });
});
