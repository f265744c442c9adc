import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { handOverPaymentFailure } from '../../handover/payment-handover.js';
import { createDb, type Db } from '../../lib/db.js';
import { parseDuration } from '../../lib/duration.js';
import { chargeFakePayment, moveFakePayment } from '../fakes/payment-provider.js';
import { SCARCE_SKU, stockCatalog, type ChaosCatalog } from './catalog.js';
import { ChaosClient } from './client.js';
import { say, WORKER_SIGKILL } from './faults.js';
import {
  callWithRetries,
  count,
  drainPending,
  emptyLedger,
  placeTracked,
  type Ledger,
  type PlacedOrder,
} from './load.js';
import { CHAOS_SECRETS, CHAOS_TASK_QUEUE, logTails, startChaosStack } from './stack.js';
import { describeVerdict, settleAndJudge } from './verdict.js';

/**
 * What the customer and their bank do about an order when the provider holds its payment (the
 * cancellable provider, as Stripe): pay in time; start a debit or a voucher before the deadline
 * whose money arrives after it, or bounces after it; start a 3-D Secure challenge and abandon it;
 * or do nothing.
 */
export const FUNDS_PLANS = ['paid', 'funds-then-paid', 'funds-then-bounced', 'action-abandoned', 'never'] as const;
export type FundsPlan = (typeof FUNDS_PLANS)[number];
const PLAN_WEIGHTS: Readonly<Record<FundsPlan, number>> = {
  paid: 25,
  'funds-then-paid': 25,
  'funds-then-bounced': 20,
  'action-abandoned': 10,
  never: 20,
};

/** How each plan's order must end, whatever fault came in between. */
export const FUNDS_OUTCOMES: Readonly<Record<FundsPlan, 'PAID' | 'CANCELLED'>> = {
  paid: 'PAID',
  'funds-then-paid': 'PAID',
  'funds-then-bounced': 'CANCELLED',
  'action-abandoned': 'CANCELLED',
  never: 'CANCELLED',
};

/** The bank answers this long after the deadline: the deadline's close has normally run by then. */
const BANK_ANSWERS_AFTER_MS = { min: 1_500, spread: 2_000 };
const MAX_IN_FLIGHT_ORDERS = 30;

/**
 * A steady stream of orders over HTTP on a stack whose provider cancels payments, each played by
 * its plan: the customer's moves go to the local provider (moveFakePayment, chargeFakePayment), a
 * payment's webhook to the API's callback, a bounced debit's event to the order's run the way the
 * webhook hands it over (handOverPaymentFailure). `heldAwaitingFunds` counts the orders seen
 * AWAITING_FUNDS when their money came: the run exercised the hold only if it is above 0.
 */
export class FundsLoad {
  readonly ledger: Ledger = emptyLedger();
  heldAwaitingFunds = 0;
  private readonly pending = new Set<Promise<void>>();
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;

  constructor(
    private readonly parts: { client: ChaosClient; db: Db; temporal: Client; catalog: ChaosCatalog },
    private readonly options: { ordersPerSecond: number; paymentWindowMs: number; random: () => number },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.inFlight >= MAX_IN_FLIGHT_ORDERS)
        return count(this.ledger.unanswered, 'order skipped: too many in flight');
      const work = this.placeAndPlay().catch((err: Error) =>
        count(this.ledger.unanswered, `plan failed: ${err.message}`),
      );
      this.pending.add(work);
      void work.finally(() => this.pending.delete(work));
    }, 1_000 / this.options.ordersPerSecond);
  }

  async stop(boundMs = 90_000): Promise<Ledger> {
    clearInterval(this.timer);
    await drainPending(this.pending, this.ledger, boundMs, 'plays');
    return this.ledger;
  }

  private async placeAndPlay(): Promise<void> {
    const plan = this.pick();
    const n = this.sequence++;
    const skus = this.parts.catalog.skus.filter((sku) => sku !== SCARCE_SKU);
    const body = {
      customerId: `chaos-funds-${n % 20}`,
      items: [{ sku: skus[n % skus.length]!, quantity: 1 + Math.floor(this.options.random() * 3) }],
    };
    this.inFlight++;
    let order: PlacedOrder | undefined;
    try {
      order = await placeTracked(this.parts.client, this.ledger, body, plan);
    } finally {
      this.inFlight--;
    }
    if (!order || plan === 'never') return;
    await sleep(this.options.random() * this.options.paymentWindowMs * 0.4);
    const { db } = this.parts;
    switch (plan) {
      case 'paid':
        return this.pay(order);
      case 'action-abandoned':
        await moveFakePayment(db, { orderId: order.id, to: 'action' });
        return;
      case 'funds-then-paid':
      case 'funds-then-bounced': {
        await moveFakePayment(db, { orderId: order.id, to: 'funds' });
        await this.untilBankAnswers(order);
        if ((await this.statusOf(order.id)) === 'AWAITING_FUNDS') this.heldAwaitingFunds++;
        if (plan === 'funds-then-paid') return this.pay(order);
        const bounced = await moveFakePayment(db, { orderId: order.id, to: 'bounce' });
        if (bounced.outcome === 'NO_PAYMENT') throw new Error(`no payment at the provider for ${order.id}`);
        await handOverPaymentFailure(this.parts.temporal, { orderId: order.id, paymentId: bounced.payment.paymentId });
        return;
      }
    }
  }

  /** The customer's money is taken at the provider, then its webhook is posted (retried as a provider would). */
  private async pay(order: PlacedOrder): Promise<void> {
    const charge = await chargeFakePayment(this.parts.db, { orderId: order.id, amountCents: order.totalCents });
    if (charge.outcome !== 'SUCCEEDED')
      throw new Error(`the provider refused to charge ${order.id}: ${charge.outcome}`);
    const { paymentId, amountCents } = charge.payment;
    await callWithRetries(this.ledger, 'POST /payments/callback', () =>
      this.parts.client.pay({ paymentId, orderId: order.id, amountCents }),
    );
  }

  private async untilBankAnswers(order: PlacedOrder): Promise<void> {
    const wait = BANK_ANSWERS_AFTER_MS.min + this.options.random() * BANK_ANSWERS_AFTER_MS.spread;
    await sleep(Math.max(0, Date.parse(order.expiresAt) - Date.now() + wait));
  }

  private async statusOf(orderId: string): Promise<string | undefined> {
    const answer = await this.parts.client.admin('GET', `/orders/${orderId}`);
    return answer.status === 200 ? (answer.body as { status: string }).status : undefined;
  }

  private pick(): FundsPlan {
    const total = FUNDS_PLANS.reduce((sum, plan) => sum + PLAN_WEIGHTS[plan], 0);
    let r = this.options.random() * total;
    for (const plan of FUNDS_PLANS) if ((r -= PLAN_WEIGHTS[plan]) < 0) return plan;
    return 'never';
  }
}

export interface FundsPhase {
  ok: boolean;
  /** The verdict's last line, for the run's summary. */
  summary: string;
}

/**
 * `npm run chaos` (not on a cluster): orders awaiting funds and in a customer's action under a
 * worker SIGKILL, on a stack of their own whose provider cancels payments. The worker dies as the
 * first deadlines pass, so closes at the provider, holds and bounced debits meet a dead worker.
 * Passes when every order ends as its plan must, nothing is lost or duplicated, the checker holds,
 * and some orders were in fact held AWAITING_FUNDS.
 */
export async function runFundsPhase(options: {
  paymentWindow: string;
  profile: { ordersPerSecond: number; loadBeforeMs: number; loadAfterMs: number; settleBoundMs: number };
  random: () => number;
}): Promise<FundsPhase> {
  const name = 'money on its way, worker SIGKILL';
  console.log(`\n== ${name} (a stack whose provider cancels payments)`);
  const stack = await startChaosStack({
    paymentWindow: options.paymentWindow,
    cluster: false,
    payments: 'cancellable',
  });
  let failed = true;
  try {
    const client = new ChaosClient(stack.apiUrl, CHAOS_SECRETS);
    const db = createDb(stack.databaseUrl, { maxConnections: 3 });
    const connection = await Connection.connect({ address: stack.temporalAddress });
    try {
      const temporal = new Client({ connection });
      const catalog = await stockCatalog(client, 0);
      const { profile } = options;
      const load = new FundsLoad(
        { client, db, temporal, catalog },
        {
          ordersPerSecond: profile.ordersPerSecond,
          paymentWindowMs: parseDuration(options.paymentWindow),
          random: options.random,
        },
      );
      load.start();
      say(
        `load: ${profile.ordersPerSecond} orders/s paid in time, awaiting funds then paid or bounced, in an abandoned 3-D Secure, or never paid`,
      );
      await sleep(profile.loadBeforeMs);
      await WORKER_SIGKILL.inject(stack, client);
      await sleep(profile.loadAfterMs);
      say('load stopped; waiting for every order to end as its plan must');
      const ledger = await load.stop();
      const verdict = await settleAndJudge(
        db,
        temporal,
        CHAOS_TASK_QUEUE,
        ledger,
        profile.settleBoundMs,
        FUNDS_OUTCOMES,
      );
      const lines = describeVerdict(name, ledger, verdict);
      const held = load.heldAwaitingFunds > 0;
      lines.splice(
        -1,
        0,
        `   ${load.heldAwaitingFunds} orders were AWAITING_FUNDS when their money came or bounced${held ? '' : ' — FAIL: the hold was never exercised'}`,
      );
      console.log(lines.join('\n'));
      failed = !verdict.ok || !held || stack.crashes.length > 0;
      return { ok: !failed, summary: lines.at(-1)! };
    } finally {
      await connection.close();
      await db.$disconnect();
    }
  } finally {
    if (failed) console.log(await logTails(stack.logDir).catch((err: Error) => `(logs unreadable: ${err.message})`));
    await stack.stop({ keepFiles: failed });
  }
}
