import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { ORDER_EVENT_TYPES } from '../../domain/order-events.js';
import type { Db } from '../../lib/db.js';
import type { ChaosClient } from './client.js';
import type { Ledger } from './load.js';

/** One delivery the receiver accepted: its signature verified with the endpoint's secret. */
interface Receipt {
  orderId: string;
  seq: number;
  copies: number;
}

/**
 * The shop's own system as chaos plays it: a loopback endpoint that verifies each delivery with the
 * Standard Webhooks library and records its webhook-id, orderId and seq. A delivery whose signature
 * does not verify is counted and refused (401), so the service retries it.
 */
export class WebhookReceiver {
  /** By webhook-id (the event's id). */
  readonly received = new Map<string, Receipt>();
  badSignatures = 0;
  private verifier: Webhook | undefined;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => res.writeHead(receiver.accept(body, req.headers as Record<string, string>)).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/order-events`;
  }

  /** Subscribes the receiver to every event type through the admin API; it keeps the secret answered. */
  async register(client: ChaosClient): Promise<void> {
    const answer = await client.admin('POST', '/webhook-endpoints', {
      url: this.url,
      eventTypes: [...ORDER_EVENT_TYPES],
    });
    if (answer.status !== 201)
      throw new Error(`POST /webhook-endpoints → ${answer.status} ${JSON.stringify(answer.body)}`);
    this.verifier = new Webhook((answer.body as { secret: string }).secret);
  }

  private accept(body: string, headers: Record<string, string>): number {
    let payload: { data: { orderId: string; seq: number } };
    try {
      payload = this.verifier!.verify(body, headers) as typeof payload;
    } catch {
      this.badSignatures++;
      return 401;
    }
    const id = headers['webhook-id']!;
    const known = this.received.get(id);
    if (known) known.copies++;
    else this.received.set(id, { orderId: payload.data.orderId, seq: payload.data.seq, copies: 1 });
    return 204;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export interface WebhookVerdict {
  ok: boolean;
  written: number;
  received: number;
  duplicates: number;
  missing: number;
  /** Orders whose received seqs are not 1..n. */
  ordersWithGaps: number;
  badSignatures: number;
  dead: number;
  /** Deliveries still PENDING when the bound ran out. */
  pending: number;
  settledInMs: number;
}

/**
 * Waits (bounded) until every event of the ledger's orders was received and no delivery is PENDING,
 * then judges: every event received at least once with a valid signature, each order's seqs 1..n,
 * no bad signature, no DEAD delivery. A worker SIGKILLed mid-send leaves its jobs locked until the
 * stale lock is released (JOB_QUEUE_STALE_LOCK, checked every minute): the bound allows for that.
 */
export async function settleWebhooks(
  db: Db,
  receiver: WebhookReceiver,
  ledger: Ledger,
  boundMs: number,
): Promise<WebhookVerdict> {
  const orderIds = [...ledger.orders.keys()];
  const started = Date.now();
  let lastProgress = started;
  for (;;) {
    const read = await readDeliveries(db, orderIds).catch(() => undefined);
    const missing = read?.events.filter((e) => !receiver.received.has(e.id)).length;
    const elapsed = Date.now() - started;
    if ((read && missing === 0 && read.pending === 0) || elapsed > boundMs) {
      if (!read) throw new Error(`could not read the database for ${boundMs / 1000} s`);
      return judge(receiver, read, elapsed);
    }
    if (Date.now() - lastProgress > 10_000) {
      lastProgress = Date.now();
      console.log(
        `   … webhooks (${Math.round(elapsed / 1000)} s): ${read ? `${missing} of ${read.events.length} events not received yet, ${read.pending} deliveries PENDING` : 'database not answering'}`,
      );
    }
    await sleep(1_000);
  }
}

interface Deliveries {
  events: Array<{ id: string; order_id: string; seq: number }>;
  pending: number;
  dead: number;
}

async function readDeliveries(db: Db, orderIds: string[]): Promise<Deliveries> {
  const events = await db.$queryRaw<Deliveries['events']>`
    SELECT id::text, order_id::text, seq FROM order_events WHERE order_id = ANY(${orderIds}::uuid[])`;
  const [counts] = await db.$queryRaw<Array<{ pending: number; dead: number }>>`
    SELECT count(*) FILTER (WHERE status = 'PENDING')::int AS pending,
           count(*) FILTER (WHERE status = 'DEAD')::int AS dead
      FROM webhook_deliveries`;
  return { events, pending: counts!.pending, dead: counts!.dead };
}

function judge(receiver: WebhookReceiver, read: Deliveries, settledInMs: number): WebhookVerdict {
  let received = 0;
  let duplicates = 0;
  const seqsByOrder = new Map<string, number[]>();
  for (const event of read.events) {
    const receipt = receiver.received.get(event.id);
    if (receipt === undefined) continue;
    received++;
    duplicates += receipt.copies - 1;
    // The seq and order as the receiver read them from the signed payload, not from the database.
    seqsByOrder.set(receipt.orderId, [...(seqsByOrder.get(receipt.orderId) ?? []), receipt.seq]);
  }
  const written = new Map<string, number>();
  for (const event of read.events) written.set(event.order_id, (written.get(event.order_id) ?? 0) + 1);
  let ordersWithGaps = 0;
  for (const [orderId, n] of written) {
    const seqs = (seqsByOrder.get(orderId) ?? []).sort((a, b) => a - b);
    if (seqs.length !== n || seqs.some((seq, i) => seq !== i + 1)) ordersWithGaps++;
  }
  const missing = read.events.length - received;
  return {
    ok: missing === 0 && ordersWithGaps === 0 && receiver.badSignatures === 0 && read.dead === 0,
    written: read.events.length,
    received,
    duplicates,
    missing,
    ordersWithGaps,
    badSignatures: receiver.badSignatures,
    dead: read.dead,
    pending: read.pending,
    settledInMs,
  };
}

/** The line printed after each fault's verdict. */
export function describeWebhooks(name: string, v: WebhookVerdict): string {
  return (
    `${name} webhooks: ${v.written} events written, ${v.received} received, ${v.duplicates} duplicates received, ` +
    `${v.missing} missing, ${v.ordersWithGaps} orders with a gap, ${v.badSignatures} bad signatures, ${v.dead} DEAD` +
    `${v.pending > 0 ? `, ${v.pending} still PENDING` : ''} (in ${(v.settledInMs / 1000).toFixed(1)} s)${v.ok ? '' : ' — FAILED'}`
  );
}
