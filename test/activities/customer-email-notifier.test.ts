import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomerEmailNotifier } from '../../activities/customer-email-notifier.js';
import { createCustomerEmails } from '../../activities/customer-emails.js';
import type { SmtpMailer } from '../../adapters/smtp/mailer.js';
import type { NotificationTemplate } from '../../domain/statuses.js';
import type { TestDatabase } from '../helpers/database.js';
import type { TestMailpit } from '../helpers/mailpit.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import { FROM_DOMAIN, startMailServer, type MailServer } from '../helpers/mail-server.js';

/**
 * The production Notifier against a real SMTP server (Mailpit, which takes mail only for
 * @customers.example): a notice sends its event's email through the outbox job's own claim, so the
 * job and the notice together send one email, whichever runs first or both at once.
 */
let database: TestDatabase;
let mailpit: TestMailpit;
let proxy: TcpProxy;
let mailer: SmtpMailer;
let server: MailServer | undefined;

beforeAll(async () => {
  server = await startMailServer();
  ({ database, mailpit, proxy, mailer } = server);
}, 10 * 60_000); // a fresh machine builds Mailpit first

afterAll(() => server?.close());

beforeEach(() => server!.reset());

const deps = () => ({ pool: database.prisma.pool, mailer, currency: 'eur' });
const notifier = () => createCustomerEmailNotifier(deps());
const job = () => createCustomerEmails(deps());

async function order(
  fields: { email?: string | null; status?: string; cancelReason?: string } = {},
): Promise<{ id: string; email: string | null }> {
  const id = randomUUID();
  const email = fields.email === undefined ? `buyer-${id.slice(0, 8)}@customers.example` : fields.email;
  await database.prisma.pool.query(
    `INSERT INTO orders (id, customer_id, email, status, total_cents, currency, expires_at, cancel_reason, request_hash)
     VALUES ($1, 'c-1', $2, $3, 4250, 'eur', now() + interval '1 hour', $4, 'h')`,
    [id, email, fields.status ?? 'PAID', fields.cancelReason ?? null],
  );
  return { id, email };
}

/** An event as the outbox writes it (the trigger queues its job; no runner here, the test runs the job). */
async function event(orderId: string, type: string, data: Record<string, unknown> = {}): Promise<string> {
  const { rows } = await database.prisma.pool.query<{ id: string }>(
    `WITH bumped AS (UPDATE orders SET event_seq = event_seq + 1 WHERE id = $1 RETURNING event_seq)
     INSERT INTO order_events (id, order_id, seq, type, data)
     SELECT gen_random_uuid(), $1, event_seq, $2, $3 FROM bumped RETURNING id`,
    [orderId, type, JSON.stringify({ orderId, ...data })],
  );
  return rows[0]!.id;
}

const notice = (orderId: string, template: NotificationTemplate, key?: string) => ({
  idempotencyKey: [orderId, template, ...(key ? [key] : [])].join(':'),
  customerId: 'c-1',
  orderId,
  template,
  ...(key ? { key } : {}),
});

async function messageIds(): Promise<string[]> {
  return (await mailpit.received()).map((m) => m.MessageID);
}

/** The ApplicationFailure type and retryability a rejected call carries. */
async function failureOf(call: Promise<void>): Promise<{ type: string | undefined | null; nonRetryable: boolean }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  const failure = err as ApplicationFailure;
  return { type: failure.type, nonRetryable: failure.nonRetryable === true };
}

describe('the customer-email notifier', () => {
  it('a payment notice sends the email of the order.paid event; the job after it sends nothing', async () => {
    const { id, email } = await order();
    const paid = await event(id, 'order.paid', { paymentId: 'pay-1', amountCents: 4250 });
    await notifier().send(notice(id, 'PAYMENT_RECEIVED'));
    await expect(job().customerEmailTask({ eventId: paid })).resolves.toBeUndefined();
    const received = await mailpit.received();
    expect(received.map((m) => m.MessageID)).toEqual([`${paid}@${FROM_DOMAIN}`]);
    expect(received[0]!.To.map((t) => t.Address)).toEqual([email]);
    expect(received[0]!.Subject).toContain('Payment received');
  });

  it('the job first: the notice finds it handled and sends nothing', async () => {
    const { id } = await order({ status: 'CANCELLED', cancelReason: 'CUSTOMER' });
    const cancelled = await event(id, 'order.cancelled', { reason: 'CUSTOMER' });
    await job().customerEmailTask({ eventId: cancelled });
    await notifier().send(notice(id, 'ORDER_CANCELLED'));
    expect(await messageIds()).toEqual([`${cancelled}@${FROM_DOMAIN}`]);
  });

  it('the notice and the job racing send exactly one email per event', async () => {
    const events: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        const { id } = await order();
        const paid = await event(id, 'order.paid', { paymentId: `pay-${id}`, amountCents: 4250 });
        events.push(paid);
        await Promise.all([
          notifier().send(notice(id, 'PAYMENT_RECEIVED')),
          job().customerEmailTask({ eventId: paid }),
        ]);
      }),
    );
    expect((await messageIds()).sort()).toEqual(events.map((e) => `${e}@${FROM_DOMAIN}`).sort());
  });

  it("a refund notice sends the email of the refund of its payment, not another's", async () => {
    const { id } = await order();
    await event(id, 'order.refunded', { paymentId: 'pay-a', amountCents: 1000, reason: 'ALREADY_PAID' });
    const second = await event(id, 'order.refunded', { paymentId: 'pay-b', amountCents: 1999, reason: 'ALREADY_PAID' });
    await notifier().send(notice(id, 'PAYMENT_REFUNDED', 'pay-b'));
    const received = await mailpit.received();
    expect(received.map((m) => m.MessageID)).toEqual([`${second}@${FROM_DOMAIN}`]);
    expect(received[0]!.Text).toContain('€19.99');
  });

  it('an order without an address: nothing to send, the notice is done', async () => {
    const { id } = await order({ email: null });
    await event(id, 'order.paid', { paymentId: 'pay-1', amountCents: 4250 });
    await expect(notifier().send(notice(id, 'PAYMENT_RECEIVED'))).resolves.toBeUndefined();
    expect(await messageIds()).toEqual([]);
  });

  it('an address the server refuses is THIRD_PARTY_REJECTED, also for a notice after the job was refused', async () => {
    const first = await order({ email: 'nobody@elsewhere.example' });
    await event(first.id, 'order.paid', { paymentId: 'pay-1', amountCents: 4250 });
    expect(await failureOf(notifier().send(notice(first.id, 'PAYMENT_RECEIVED')))).toEqual({
      type: 'THIRD_PARTY_REJECTED',
      nonRetryable: true,
    });
    const second = await order({ email: 'nobody@elsewhere.example' });
    const paid = await event(second.id, 'order.paid', { paymentId: 'pay-2', amountCents: 4250 });
    await job().customerEmailTask({ eventId: paid }); // refused and recorded, not thrown
    expect(await failureOf(notifier().send(notice(second.id, 'PAYMENT_RECEIVED')))).toEqual({
      type: 'THIRD_PARTY_REJECTED',
      nonRetryable: true,
    });
    expect(await messageIds()).toEqual([]);
  });

  it('a server that cannot be reached is THIRD_PARTY_UNAVAILABLE, and the retry sends one email', async () => {
    const { id } = await order();
    const paid = await event(id, 'order.paid', { paymentId: 'pay-1', amountCents: 4250 });
    await proxy.down();
    expect(await failureOf(notifier().send(notice(id, 'PAYMENT_RECEIVED')))).toEqual({
      type: 'THIRD_PARTY_UNAVAILABLE',
      nonRetryable: false,
    });
    await proxy.up();
    await notifier().send(notice(id, 'PAYMENT_RECEIVED'));
    await notifier().send(notice(id, 'PAYMENT_RECEIVED'));
    expect(await messageIds()).toEqual([`${paid}@${FROM_DOMAIN}`]);
  });
});
