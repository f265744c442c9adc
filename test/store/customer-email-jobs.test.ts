import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER_EMAIL_EVENTS, CUSTOMER_EMAIL_TASK } from '../../activities/customer-emails.js';
import { ORDER_EVENT_TYPES } from '../../domain/order-events.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The outbox's email jobs on real PostgreSQL: writing an order event queues a `customer_email` job
 * in the same transaction for exactly the events a customer hears about by email
 * (CUSTOMER_EMAIL_EVENTS), and only for an order with an address.
 */
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function orderWith(email: string | null): Promise<string> {
  const id = randomUUID();
  await database.prisma.order.create({
    data: { id, customerId: 'c-email-jobs', totalCents: 100, expiresAt: new Date(), requestHash: 'h', email },
  });
  return id;
}

/** The event ids the queue holds a customer_email job for. */
async function queuedEmails(): Promise<string[]> {
  const { rows } = await database.prisma.pool.query<{ event_id: string }>(
    // The public view leaves the payload out: it is read from the queue's own tables.
    `SELECT j.payload->>'eventId' AS event_id FROM graphile_worker._private_jobs j
     JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = $1`,
    [CUSTOMER_EMAIL_TASK],
  );
  return rows.map((r) => r.event_id);
}

async function writeEvents(orderId: string): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const [i, type] of ORDER_EVENT_TYPES.entries()) {
    const id = randomUUID();
    await database.prisma.orderEvent.create({ data: { id, orderId, seq: i + 1, type, data: {} } });
    ids.set(type, id);
  }
  return ids;
}

describe('customer email jobs', () => {
  it('are queued for the email events of an order with an address, and for nothing else', async () => {
    const events = await writeEvents(await orderWith('ada@example.com'));
    const emailTypes = ORDER_EVENT_TYPES.filter((type) => CUSTOMER_EMAIL_EVENTS[type] !== undefined);
    expect(emailTypes.length).toBeGreaterThan(0);
    expect((await queuedEmails()).sort()).toEqual(emailTypes.map((type) => events.get(type)).sort());
  });

  it('are not queued for an order without an address', async () => {
    const before = await queuedEmails();
    await writeEvents(await orderWith(null));
    expect(await queuedEmails()).toEqual(before);
  });
});
