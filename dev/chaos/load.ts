import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SCARCE_SKU, type ChaosCatalog } from './catalog.js';
import type { ApiAnswer, ChaosClient } from './client.js';
import type { Sample } from './latency.js';

/** What the provider will do about an order: the mix of good, late, wrong, repeated and missing payments. */
export type PaymentPlan = 'on-time' | 'late' | 'wrong-amount' | 'redelivered' | 'paid-twice' | 'never';
const PLAN_WEIGHTS: ReadonlyArray<readonly [PaymentPlan, number]> = [
  ['on-time', 35],
  ['late', 10],
  ['wrong-amount', 10],
  ['redelivered', 15],
  ['paid-twice', 5],
  ['never', 25],
];
/**
 * Like a real client and a real provider, retry an unanswered call (no answer or 5xx) a few times,
 * each pause twice the last (1, 2, 4, 8 s): the last attempt comes 15 s after the first, past an API
 * that was SIGKILLed and takes seconds to start again on a loaded machine.
 */
const ATTEMPTS = 5;
const FIRST_RETRY_PAUSE_MS = 1_000;
const MAX_IN_FLIGHT_ORDERS = 30;

/** Everything the generator was told: only 201s and 202s are promises the service made. */
export interface Ledger {
  /** Every order answered 201, by id, with the plan its generator had for it (a PaymentPlan, a FundsPlan). */
  orders: Map<string, { plan: string; totalCents: number; expiresAt: string }>;
  /**
   * Every payment answered 202, by paymentId. The service judges a payment by when its webhook
   * accepted it, which lies between the generator sending it and receiving the 202: a payment
   * sent after the deadline must never capture, one answered before it must never be refused as late.
   */
  payments: Map<
    string,
    {
      orderId: string;
      plan: PaymentPlan;
      sentBeforeDeadline: boolean;
      answeredBeforeDeadline: boolean;
      correctAmount: boolean;
    }
  >;
  /** Business refusals (e.g. `POST /orders 409 OUT_OF_STOCK`), by kind. */
  refused: Map<string, number>;
  /** Calls that got no answer or a 5xx (each retried), by kind. */
  unanswered: Map<string, number>;
  /** Every call's latency, by kind (`POST /orders`, `POST /payments/callback`); ok: it got an answer below 500. */
  latencies: Map<string, Sample[]>;
}

export function emptyLedger(): Ledger {
  return { orders: new Map(), payments: new Map(), refused: new Map(), unanswered: new Map(), latencies: new Map() };
}

/** A small seeded PRNG (mulberry32): the same seed gives the same mix of orders and payments. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A steady stream of orders over HTTP and, for each, the payments its plan calls for. stop() ends the
 * stream and waits (bounded) for the payments still scheduled, then hands over the ledger.
 */
export class LoadGenerator {
  readonly ledger: Ledger = emptyLedger();
  private readonly pending = new Set<Promise<void>>();
  private inFlightOrders = 0;
  /** When each payment was first sent, over all its deliveries and retries. */
  private readonly firstSent = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;

  constructor(
    private readonly client: ChaosClient,
    private readonly catalog: ChaosCatalog,
    private readonly options: { ordersPerSecond: number; paymentWindowMs: number; random: () => number },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.inFlightOrders >= MAX_IN_FLIGHT_ORDERS)
        return count(this.ledger.unanswered, 'order skipped: too many in flight');
      this.track(this.placeAndPay());
    }, 1_000 / this.options.ordersPerSecond);
  }

  async stop(boundMs = 90_000): Promise<Ledger> {
    clearInterval(this.timer);
    await drainPending(this.pending, this.ledger, boundMs, 'calls');
    return this.ledger;
  }

  private track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  private async placeAndPay(): Promise<void> {
    const plan = this.pick();
    const order = await this.placeOrder(plan);
    if (!order || plan === 'never') return;
    const window = this.options.paymentWindowMs;
    const amount = plan === 'wrong-amount' ? order.totalCents + 1 : order.totalCents;
    const delay =
      plan === 'late'
        ? Date.parse(order.expiresAt) - Date.now() + 300 + this.random() * 1_200
        : this.random() * window * 0.4;
    await sleep(Math.max(0, delay));
    const paymentId = `chaos-pay-${randomUUID()}`;
    await this.pay(order, paymentId, amount, plan);
    if (plan === 'redelivered') await sleep(200).then(() => this.pay(order, paymentId, amount, plan));
    if (plan === 'paid-twice') await this.pay(order, `chaos-pay-${randomUUID()}`, amount, plan);
  }

  private async placeOrder(
    plan: PaymentPlan,
  ): Promise<{ id: string; totalCents: number; expiresAt: string } | undefined> {
    const n = this.sequence++;
    const skus = this.catalog.skus.filter((sku) => sku !== SCARCE_SKU);
    const items = [{ sku: skus[n % skus.length]!, quantity: 1 + Math.floor(this.random() * 3) }];
    if (this.random() < 0.15) items.push({ sku: SCARCE_SKU, quantity: 1 });
    const couponCode = this.random() < 0.25 ? this.catalog.nextCoupon() : undefined;
    const body = { customerId: `chaos-${n % 20}`, items, ...(couponCode ? { couponCode } : {}) };
    this.inFlightOrders++;
    try {
      return await placeTracked(this.client, this.ledger, body, plan);
    } finally {
      this.inFlightOrders--;
    }
  }

  private async pay(
    order: { id: string; totalCents: number; expiresAt: string },
    paymentId: string,
    amountCents: number,
    plan: PaymentPlan,
  ) {
    const deadline = Date.parse(order.expiresAt);
    const answer = await this.withRetries('POST /payments/callback', () => {
      // The first attempt counts: one the client gave up on (10-s timeout) may still have been
      // accepted by the service, which judges the deadline by when the webhook received the payment.
      if (!this.firstSent.has(paymentId)) this.firstSent.set(paymentId, Date.now());
      return this.client.pay({ paymentId, orderId: order.id, amountCents });
    });
    if (answer.status !== 202) return;
    // A redelivery is the same payment: sent (or answered) in time if any delivery was. Judged by
    // the last one alone, a payment captured just before the deadline and redelivered just after
    // it was reported as "late but captured".
    const earlier = this.ledger.payments.get(paymentId);
    this.ledger.payments.set(paymentId, {
      orderId: order.id,
      plan,
      sentBeforeDeadline: this.firstSent.get(paymentId)! < deadline,
      answeredBeforeDeadline: earlier?.answeredBeforeDeadline === true || Date.now() < deadline,
      correctAmount: amountCents === order.totalCents,
    });
  }

  private withRetries(kind: string, call: () => Promise<ApiAnswer>): Promise<ApiAnswer> {
    return callWithRetries(this.ledger, kind, call);
  }

  private pick(): PaymentPlan {
    const total = PLAN_WEIGHTS.reduce((sum, [, w]) => sum + w, 0);
    let r = this.random() * total;
    for (const [plan, weight] of PLAN_WEIGHTS) if ((r -= weight) < 0) return plan;
    return 'never';
  }

  private random(): number {
    return this.options.random();
  }
}

/** Retries what got no answer or a 5xx; records latencies, refusals (4xx) and what stayed unanswered. */
export type PlacedOrder = { id: string; totalCents: number; expiresAt: string };

/** POST /orders with retries, the order recorded in the ledger under `plan` once it is 201. */
export async function placeTracked(
  client: ChaosClient,
  ledger: Ledger,
  body: { customerId: string; items: unknown[] },
  plan: string,
): Promise<PlacedOrder | undefined> {
  // One Idempotency-Key per order, reused by every retry: a retry is the same order, never a second one.
  const headers = { 'idempotency-key': `chaos-order-${randomUUID()}` };
  const answer = await callWithRetries(ledger, 'POST /orders', () =>
    client.asCustomer(body.customerId, 'POST', '/orders', { json: body, headers }),
  );
  if (answer.status !== 201) return undefined;
  const order = answer.body as PlacedOrder;
  ledger.orders.set(order.id, { plan, totalCents: order.totalCents, expiresAt: order.expiresAt });
  return order;
}

export async function callWithRetries(
  ledger: Ledger,
  kind: string,
  call: () => Promise<ApiAnswer>,
): Promise<ApiAnswer> {
  let answer: ApiAnswer = { status: 0, body: undefined, ms: 0 };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    answer = await call();
    const answered = answer.status > 0 && answer.status < 500;
    const samples = ledger.latencies.get(kind) ?? [];
    samples.push({ ms: answer.ms, ok: answered });
    ledger.latencies.set(kind, samples);
    if (answered) {
      if (answer.status >= 400)
        count(ledger.refused, `${kind} ${answer.status} ${answer.body?.error?.code ?? ''}`.trim());
      return answer;
    }
    count(ledger.unanswered, `${kind} ${answer.status === 0 ? 'no answer' : answer.status}`);
    if (attempt < ATTEMPTS) await sleep(FIRST_RETRY_PAUSE_MS * 2 ** (attempt - 1));
  }
  return answer;
}

/** Waits (bounded) for the work a load still has under way; what is left is counted as unanswered. */
export async function drainPending(
  pending: Set<Promise<void>>,
  ledger: Ledger,
  boundMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (pending.size > 0 && Date.now() < deadline)
    await Promise.race([Promise.allSettled([...pending]), sleep(1_000)]);
  if (pending.size > 0) count(ledger.unanswered, `${what} still pending after ${boundMs / 1000} s`, pending.size);
}

export function count(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}
