import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomerEmails, type OrderEventRow } from '../../activities/customer-emails.js';
import { MailerUnavailable, type Mailer } from '../../adapters/ports/mailer.js';
import { createSmtpMailer, type SmtpMailer } from '../../adapters/smtp/mailer.js';
import { PROJECT_ROOT } from '../../dev/paths.js';
import type { TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { startTestMailpit, type ReceivedEmail, type TestMailpit } from '../helpers/mailpit.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { FROM_DOMAIN, shopMailSettings, startMailServer, type MailServer } from '../helpers/mail-server.js';

/**
 * The customer emails end to end against a real SMTP server: an order row and its event inserted as
 * the outbox writes them, the consumer run on them, and what Mailpit received read through its API.
 * Mailpit takes mail only for @customers.example, so another address is a permanent refusal.
 */
let database: TestDatabase;
let mailpit: TestMailpit;
/** Between the mailer and Mailpit: down() is an SMTP server that cannot be reached. */
let proxy: TcpProxy;
let mailer: SmtpMailer;
let server: MailServer | undefined;

beforeAll(async () => {
  server = await startMailServer();
  ({ database, mailpit, proxy, mailer } = server);
}, 10 * 60_000); // a fresh machine builds Mailpit first (a minute or more on 2 cores)

afterAll(() => server?.close());

beforeEach(() => server!.reset());

function consumer(using: Mailer = mailer) {
  return createCustomerEmails({ pool: database.prisma.pool, mailer: using, currency: 'eur' });
}

const DEADLINE = new Date('2026-12-07T10:30:00Z');
const DEADLINE_IN_WORDS = 'Monday, 7 December 2026 at 10:30 UTC';

async function order(
  fields: { email?: string | null; status?: string; totalCents?: number; cancelReason?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await database.prisma.pool.query(
    `INSERT INTO orders (id, customer_id, email, status, total_cents, currency, expires_at, cancel_reason, request_hash)
     VALUES ($1, 'c-1', $2, $3, $4, 'eur', $5, $6, 'h')`,
    [
      id,
      fields.email === undefined ? `buyer-${id.slice(0, 8)}@customers.example` : fields.email,
      fields.status ?? 'UNPAID',
      fields.totalCents ?? 4250,
      DEADLINE,
      fields.cancelReason ?? null,
    ],
  );
  return id;
}

async function event(orderId: string, type: string, data: Record<string, unknown> = {}): Promise<OrderEventRow> {
  const { rows } = await database.prisma.pool.query<OrderEventRow>(
    `WITH bumped AS (UPDATE orders SET event_seq = event_seq + 1 WHERE id = $1 RETURNING event_seq)
     INSERT INTO order_events (id, order_id, seq, type, data)
     SELECT gen_random_uuid(), $1, event_seq, $2, $3 FROM bumped
     RETURNING id, order_id AS "orderId", seq, type, data, occurred_at AS "occurredAt"`,
    [orderId, type, JSON.stringify({ orderId, ...data })],
  );
  return rows[0]!;
}

async function emailOf(orderId: string): Promise<string> {
  const { rows } = await database.prisma.pool.query<{ email: string }>('SELECT email FROM orders WHERE id = $1', [
    orderId,
  ]);
  return rows[0]!.email;
}

async function records(eventId: string) {
  const { rows } = await database.prisma.pool.query<{
    recipient: string;
    message_id: string;
    rejection: string | null;
  }>('SELECT recipient, message_id, rejection FROM customer_emails WHERE event_id = $1', [eventId]);
  return rows;
}

/** Sessions on the test database, other than this one, inside a transaction. */
async function openTransactions(): Promise<number> {
  const { rows } = await database.prisma.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
  );
  return rows[0]!.n;
}

/** The one email Mailpit holds: fails if it holds none or several. */
async function onlyEmail(): Promise<ReceivedEmail> {
  const received = await mailpit.received();
  expect(received).toHaveLength(1);
  return received[0]!;
}

function expectAddressed(email: ReceivedEmail, to: string, eventId: string) {
  expect(email.To.map((t) => t.Address)).toEqual([to]);
  expect(email.From).toEqual({ Name: 'Widget Shop', Address: `orders@${FROM_DOMAIN}` });
  expect(email.ReplyTo.map((r) => r.Address)).toEqual([`help@${FROM_DOMAIN}`]);
  expect(email.MessageID).toBe(`${eventId}@${FROM_DOMAIN}`);
}

describe('one email per notice, with what the customer needs to know', () => {
  it('placed: the total and the deadline', async () => {
    const orderId = await order();
    const placed = await event(orderId, 'order.placed');
    await expect(consumer().sendCustomerEmail(placed)).resolves.toEqual({
      outcome: 'sent',
      messageId: `<${placed.id}@${FROM_DOMAIN}>`,
    });
    const email = await onlyEmail();
    expectAddressed(email, await emailOf(orderId), placed.id);
    expect(email.Subject).toBe(`Your order ${orderId.slice(0, 8)}: please pay by ${DEADLINE_IN_WORDS}`);
    for (const part of [email.Text, email.HTML]) {
      expect(part).toContain(orderId);
      expect(part).toContain('€42.50');
      expect(part).toContain(DEADLINE_IN_WORDS);
    }
    expect(await records(placed.id)).toEqual([
      { recipient: await emailOf(orderId), message_id: `<${placed.id}@${FROM_DOMAIN}>`, rejection: null },
    ]);
  });

  it('placed and already paid (nothing owed): a confirmation that asks for no payment', async () => {
    const orderId = await order({ status: 'PAID', totalCents: 0 });
    const placed = await event(orderId, 'order.placed');
    await consumer().sendCustomerEmail(placed);
    const email = await onlyEmail();
    expect(email.Subject).toBe(`Your order ${orderId.slice(0, 8)} is placed`);
    expect(email.Text).not.toContain('pay by');
  });

  it('payment reminder: the deadline', async () => {
    const orderId = await order();
    const reminder = await event(orderId, 'order.payment_reminder', { expiresAt: DEADLINE.toISOString() });
    await consumer().sendCustomerEmail(reminder);
    const email = await onlyEmail();
    expectAddressed(email, await emailOf(orderId), reminder.id);
    expect(email.Subject).toBe(`Reminder: your order ${orderId.slice(0, 8)} is not paid yet`);
    expect(email.Text).toContain(`Please pay by ${DEADLINE_IN_WORDS}`);
    expect(email.HTML).toContain(DEADLINE_IN_WORDS);
  });

  it('paid: the amount', async () => {
    const orderId = await order({ status: 'PAID' });
    const paid = await event(orderId, 'order.paid', { paymentId: 'pay_1', amountCents: 4250 });
    await consumer().sendCustomerEmail(paid);
    const email = await onlyEmail();
    expectAddressed(email, await emailOf(orderId), paid.id);
    expect(email.Subject).toBe(`Payment received for your order ${orderId.slice(0, 8)}`);
    expect(email.Text).toContain('We have received your payment of €42.50');
  });

  it.each([
    ['PAYMENT_TIMEOUT', 'it was not paid before its deadline'],
    ['CUSTOMER', 'you cancelled it'],
    ['PAYMENT_FAILED', 'the payment did not go through'],
  ])('cancelled (%s): the reason in words, from the order row', async (reason, words) => {
    const orderId = await order({ status: 'CANCELLED', cancelReason: reason });
    // The event's data says nothing of the reason: the order row is read.
    const cancelled = await event(orderId, 'order.cancelled');
    await consumer().sendCustomerEmail(cancelled);
    const email = await onlyEmail();
    expectAddressed(email, await emailOf(orderId), cancelled.id);
    expect(email.Subject).toBe(`Your order ${orderId.slice(0, 8)} has been cancelled`);
    expect(email.Text).toContain(`has been cancelled: ${words}.`);
    expect(email.HTML).toContain(`: ${words.replace("'", '&#39;')}.`);
  });

  it('refunded: the amount given back and why', async () => {
    const orderId = await order({ status: 'PAID' });
    await database.prisma.pool.query(
      `INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, currency, refund_reason)
       VALUES ('pay_dup', $1, 1999, 'REFUNDED', now(), 'eur', 'ALREADY_PAID')`,
      [orderId],
    );
    await database.prisma.pool.query(
      `INSERT INTO refunds (payment_id, amount_cents, provider_ref) VALUES ('pay_dup', 1999, 're_1')`,
    );
    const refunded = await event(orderId, 'order.refunded', { paymentId: 'pay_dup' });
    await consumer().sendCustomerEmail(refunded);
    const email = await onlyEmail();
    expectAddressed(email, await emailOf(orderId), refunded.id);
    expect(email.Subject).toBe(`We have refunded €19.99 for your order ${orderId.slice(0, 8)}`);
    expect(email.Text).toContain('We have refunded €19.99');
    expect(email.Text).toContain('the order had already been paid');
    expect(email.HTML).toContain('€19.99');
  });
});

describe('exactly one email per event', () => {
  it('the same event handled twice sends one email', async () => {
    const orderId = await order({ status: 'PAID' });
    const paid = await event(orderId, 'order.paid');
    await expect(consumer().sendCustomerEmail(paid)).resolves.toMatchObject({ outcome: 'sent' });
    await expect(consumer().sendCustomerEmail(paid)).resolves.toEqual({ outcome: 'already_handled' });
    await onlyEmail();
  });

  it('the same event handled by two workers at once sends one email', async () => {
    const orderId = await order({ status: 'PAID' });
    const paid = await event(orderId, 'order.paid');
    const outcomes = await Promise.all([consumer().sendCustomerEmail(paid), consumer().sendCustomerEmail(paid)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['already_handled', 'sent']);
    await onlyEmail();
  });

  it('an unreachable SMTP server fails the call and records nothing; the retry sends exactly one', async () => {
    const orderId = await order();
    const placed = await event(orderId, 'order.placed');
    await proxy.down();
    await expect(consumer().sendCustomerEmail(placed)).rejects.toBeInstanceOf(MailerUnavailable);
    expect(await records(placed.id)).toEqual([]);
    await proxy.up();
    await expect(consumer().sendCustomerEmail(placed)).resolves.toMatchObject({ outcome: 'sent' });
    await expect(consumer().sendCustomerEmail(placed)).resolves.toEqual({ outcome: 'already_handled' });
    expect((await onlyEmail()).MessageID).toBe(`${placed.id}@${FROM_DOMAIN}`);
  });

  it('the job handler takes the event by id and throws while the server is unreachable', async () => {
    const orderId = await order({ status: 'PAID' });
    const paid = await event(orderId, 'order.paid');
    await proxy.down();
    await expect(consumer().customerEmailTask({ eventId: paid.id })).rejects.toBeInstanceOf(MailerUnavailable);
    await proxy.up();
    await consumer().customerEmailTask({ eventId: paid.id });
    await consumer().customerEmailTask(JSON.parse(JSON.stringify(paid)));
    expect((await onlyEmail()).MessageID).toBe(`${paid.id}@${FROM_DOMAIN}`);
  });

  it('a process SIGKILLed in the middle of its send: nothing recorded, and the retry sends exactly one', async () => {
    const orderId = await order();
    const placed = await event(orderId, 'order.placed');
    // Every SMTP round trip through this proxy takes half a second: the dialogue lasts seconds.
    const slow = await startTcpProxy(
      { host: '127.0.0.1', port: Number(new URL(mailpit.smtpUrl).port) },
      { delayMs: 250 },
    );
    const sender = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/activities/fixtures/send-customer-email.ts', placed.id],
      {
        cwd: PROJECT_ROOT,
        stdio: 'ignore',
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          SMTP_URL: `smtp://127.0.0.1:${slow.port}`,
          MAIL_FROM: `Widget Shop <orders@${FROM_DOMAIN}>`,
        },
      },
    );
    try {
      // Its claim on the event is inserted and not committed: it is talking to the server.
      await eventually(async () => (await openTransactions()) === 1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await openTransactions()).toBe(1);
      sender.kill('SIGKILL');
      await once(sender, 'exit');
    } finally {
      await slow.close();
    }
    // PostgreSQL rolls the dead session's claim back; the server never got the whole message.
    await eventually(async () => (await openTransactions()) === 0);
    expect(await records(placed.id)).toEqual([]);
    expect(await mailpit.received()).toEqual([]);
    await expect(consumer().sendCustomerEmail(placed)).resolves.toMatchObject({ outcome: 'sent' });
    expect((await onlyEmail()).MessageID).toBe(`${placed.id}@${FROM_DOMAIN}`);
  });

  it('a death after the server took the message resends it with the same Message-ID', async () => {
    const orderId = await order();
    const placed = await event(orderId, 'order.placed');
    // The server accepts, then the process dies before the record commits (here: a throw, which rolls it back).
    const dying: Mailer = {
      messageId: mailer.messageId,
      send: async (email) => {
        await mailer.send(email);
        throw new Error('process died');
      },
    };
    await expect(consumer(dying).sendCustomerEmail(placed)).rejects.toThrow('process died');
    expect(await records(placed.id)).toEqual([]);
    await expect(consumer().sendCustomerEmail(placed)).resolves.toMatchObject({ outcome: 'sent' });
    // Two copies reach the server, one Message-ID: what docs/operations.md says a recipient makes of it.
    const received = await mailpit.received();
    expect(received.map((e) => e.MessageID)).toEqual([`${placed.id}@${FROM_DOMAIN}`, `${placed.id}@${FROM_DOMAIN}`]);
  });

  it('a server that drops copies by Message-ID keeps one across that death', async () => {
    const deduplicating = await startTestMailpit(['--ignore-duplicate-ids']);
    const direct = createSmtpMailer(shopMailSettings(deduplicating.smtpUrl));
    try {
      const orderId = await order();
      const placed = await event(orderId, 'order.placed');
      const dying: Mailer = {
        messageId: direct.messageId,
        send: async (email) => {
          await direct.send(email);
          throw new Error('process died');
        },
      };
      await expect(consumer(dying).sendCustomerEmail(placed)).rejects.toThrow('process died');
      await expect(consumer(direct).sendCustomerEmail(placed)).resolves.toMatchObject({ outcome: 'sent' });
      expect((await deduplicating.received()).map((e) => e.MessageID)).toEqual([`${placed.id}@${FROM_DOMAIN}`]);
    } finally {
      direct.close();
      await deduplicating.stop();
    }
  });
});

describe('no email where there is none to send', () => {
  it('an order without an address: nothing sent, nothing recorded', async () => {
    const orderId = await order({ email: null });
    const placed = await event(orderId, 'order.placed');
    await expect(consumer().sendCustomerEmail(placed)).resolves.toEqual({
      outcome: 'none',
      why: 'the order has no email address',
    });
    expect(await records(placed.id)).toEqual([]);
    expect(await mailpit.received()).toEqual([]);
  });

  it('an event type without an email: nothing sent', async () => {
    const orderId = await order({ status: 'PAID' });
    const step = await event(orderId, 'order.fulfillment_step_done', { step: 'INVOICE' });
    await expect(consumer().sendCustomerEmail(step)).resolves.toMatchObject({ outcome: 'none' });
    expect(await mailpit.received()).toEqual([]);
  });

  it('a reminder handled after the order was paid, or after its deadline moved: nothing sent', async () => {
    const paidOrder = await order({ status: 'PAID' });
    const late = await event(paidOrder, 'order.payment_reminder', { expiresAt: DEADLINE.toISOString() });
    await expect(consumer().sendCustomerEmail(late)).resolves.toEqual({
      outcome: 'none',
      why: 'the order is PAID now',
    });
    const movedOrder = await order();
    const stale = await event(movedOrder, 'order.payment_reminder', { expiresAt: '2026-12-07T10:00:00Z' });
    await expect(consumer().sendCustomerEmail(stale)).resolves.toMatchObject({ outcome: 'none' });
    expect(await mailpit.received()).toEqual([]);
  });

  it('an address the server refuses for good: recorded with the refusal, not retried', async () => {
    const orderId = await order({ email: 'nobody@elsewhere.example', status: 'PAID' });
    const paid = await event(orderId, 'order.paid');
    const first = await consumer().sendCustomerEmail(paid);
    expect(first).toMatchObject({ outcome: 'rejected', messageId: `<${paid.id}@${FROM_DOMAIN}>` });
    expect(await records(paid.id)).toEqual([
      expect.objectContaining({ recipient: 'nobody@elsewhere.example', rejection: expect.stringMatching(/55\d/) }),
    ]);
    await expect(consumer().sendCustomerEmail(paid)).resolves.toEqual({ outcome: 'already_handled' });
    expect(await mailpit.received()).toEqual([]);
  });
});
