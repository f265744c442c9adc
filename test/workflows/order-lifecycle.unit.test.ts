import { randomUUID } from 'node:crypto';
import ms from 'ms';
import { WithStartWorkflowOperation, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { quietBundlerLogger } from '../helpers/quiet-bundler-logger.js';
import type { Activities } from '../../activities/index.js';
import type { CancelOrderOutcome } from '../../activities/orders.js';
import { placementOf } from '../../domain/placement.js';
import type { PaymentDecision } from '../../activities/payments.js';
import { BUSINESS_ERRORS, THIRD_PARTY_FAILURES } from '../../domain/errors.js';
import type { ClosingOutcome } from '../../activities/provider-payments.js';
import {
  forceCancelUpdate,
  LATE_PAYMENT_WORKFLOW_TYPE,
  latePaymentWorkflowId,
  ORDER_WORKFLOW_TYPE,
  orderLifecycleInput,
  orderWorkflowId,
  paidSignal,
  paymentFailedSignal,
  placeOrderUpdate,
  retryRefundUpdate,
  statusQuery,
  type OrderOutcome,
  type PlacedOrder,
} from '../../domain/messages.js';
import { NeedsAttentionKey, OrderStatusKey, WaitingForKey } from '../../domain/search-attributes.js';
import { WORKFLOWS_PATH } from '../../worker/workflow-bundle.js';
import { createTimeSkippingEnv } from '../helpers/temporal.js';
import { PROVIDER_BACKOFF } from '../../workflows/backoff.js';

/**
 * The order workflow's own logic, with every activity stubbed: which calls it makes, in which
 * order, and what it does with their answers and failures. Time-skipping server, no database:
 * the fast tier (npm run test:unit). The same paths against the real activities and PostgreSQL are
 * order-lifecycle.test.ts and payment-safety.test.ts.
 */
const MINUTE = 60_000;
const PROVIDER_CAP_MS = ms(PROVIDER_BACKOFF.cap);
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TASK_QUEUE = 'orders-unit';
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

/** Every call the stubs received, by activity, with its arguments and the server's time it came at. */
let calls: Array<{ activity: string; args: unknown[]; atMs: number }>;
/** Per test: what an activity does instead of the default below. */
let overrides: Partial<Record<keyof Activities, (...args: never[]) => Promise<unknown>>>;

const called = (activity: keyof Activities) => calls.filter((c) => c.activity === activity);

/** The server's clock, which the tests before have skipped ahead of the machine's. */
const serverNow = () => env.currentTimeMs();

async function placedOrder(orderId: string): Promise<PlacedOrder> {
  return {
    id: orderId,
    customerId: 'cust-1',
    status: 'UNPAID',
    totalCents: 1_000,
    expiresAt: new Date((await serverNow()) + 30 * MINUTE).toISOString(),
    couponCode: null,
    items: [{ sku: 'TEA', quantity: 1, unitPriceCents: 1_000 }],
    payment: null, // a callback-only provider; the provider-first tests below override placeOrder
  };
}

const cancelled = (customerTold = false): CancelOrderOutcome => ({ outcome: 'CANCELLED', customerTold, lagMs: 0 });
const decided = (outcome: 'PAID' | 'REFUND_PENDING'): PaymentDecision => ({
  outcome,
  paymentStatus: outcome === 'PAID' ? 'CAPTURED' : 'REFUND_PENDING',
  duplicate: false,
});

const providerPayment = (orderId: string) => ({ paymentId: `pi_${orderId}`, clientSecret: `pi_${orderId}_secret` });

const DEFAULTS: Partial<Record<keyof Activities, (...args: never[]) => Promise<unknown>>> = {
  placeOrder: async (request: { orderId: string }) => placementOf(await placedOrder(request.orderId)),
  loadOrder: async (orderId: string) => placedOrder(orderId),
  loadFulfillment: async () => ({}),
  cancelOrder: async () => cancelled(),
  settlePayment: async () => decided('PAID'),
  refundPayment: async () => ({ refunded: true }),
  recordRefundFailure: async () => ({ recorded: true }),
  reopenRefund: async () => ({ reopened: true }),
  createPayment: async (orderId: string) => providerPayment(orderId),
  closePayment: async () => ({ outcome: 'CLOSED' }),
  closeCancelledPayment: async () => ({ outcome: 'CLOSED' }),
  notifyCustomer: async () => undefined,
  issueInvoice: async () => undefined,
  sendPaymentNotification: async () => undefined,
  awardLoyaltyPoints: async () => undefined,
  markStepFailed: async () => ({ status: 'FAILED', changed: true }),
  reopenStep: async () => ({ reopened: true }),
};

function stubActivities(): Record<string, (...args: unknown[]) => Promise<unknown>> {
  return Object.fromEntries(
    Object.keys(DEFAULTS).map((activity) => [
      activity,
      async (...args: unknown[]) => {
        const call = { activity, args, atMs: 0 };
        calls.push(call); // in the order the calls came, whatever the clock's answers
        call.atMs = await serverNow();
        const act = (overrides[activity as keyof Activities] ?? DEFAULTS[activity as keyof Activities])!;
        return (act as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  );
}

beforeAll(async () => {
  // One after the other: the test server must listen within 5 s, which bundling beside it can cost it.
  env = await createTimeSkippingEnv();
  bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
});
afterAll(() => env?.teardown());
beforeEach(() => {
  calls = [];
  overrides = {};
});

/** A worker for this file's workflows on the stubbed activities. */
const stubbedWorker = () =>
  Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: stubActivities(),
  });

/** Places an order as POST /orders does: update-with-start. */
const placeOrder = (orderId: string) =>
  env.client.workflow.executeUpdateWithStart(placeOrderUpdate, {
    args: [{ orderId, customerId: 'cust-1', items: [{ sku: 'TEA', quantity: 1 }], requestHash: 'h' }],
    startWorkflowOperation: new WithStartWorkflowOperation(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(orderId),
      taskQueue: TASK_QUEUE,
      args: [orderLifecycleInput(orderId)],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });

/** Places an order and runs `test` while a worker serves it. */
async function withOrder<T>(test: (orderId: string) => Promise<T>): Promise<T> {
  const orderId = randomUUID();
  return (await stubbedWorker()).runUntil(async () => {
    await placeOrder(orderId);
    return test(orderId);
  });
}

const handleOf = (orderId: string) => env.client.workflow.getHandle(orderWorkflowId(orderId));
const result = (orderId: string) => handleOf(orderId).result() as Promise<OrderOutcome>;
const pay = (orderId: string, paymentId = `pay-${orderId}`) =>
  handleOf(orderId).signal(paidSignal, { paymentId, orderId });

/** The values a search attribute took, in the order the run wrote them (null: removed). */
async function writesOf<T>(orderId: string, attribute: string): Promise<Array<T | null>> {
  const { events } = await handleOf(orderId).fetchHistory();
  return (events ?? []).flatMap((e) => {
    const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    const payload = fields?.[attribute];
    if (!payload) return [];
    const value = payload.data?.length ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as T | T[]) : null;
    return [Array.isArray(value) && value.length === 0 ? null : (value as T | null)];
  });
}
/** How many runs of a local activity the history records (a task the server refused records none). */
async function recordedRuns(orderId: string, activity: keyof Activities): Promise<number> {
  const { events } = await handleOf(orderId).fetchHistory();
  return (events ?? []).filter((e) => {
    const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    return (
      data && (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type === activity
    );
  }).length;
}
const needsAttentionWrites = (orderId: string) => writesOf<boolean>(orderId, NeedsAttentionKey.name);
const waitingForWrites = (orderId: string) => writesOf<string>(orderId, WaitingForKey.name);
const waitingFor = async (orderId: string) =>
  (await handleOf(orderId).describe()).typedSearchAttributes.get(WaitingForKey);

describe('OrderLifecycle with stubbed activities', () => {
  it('an unpaid order is cancelled at its deadline by the database alone, then the customer told, once each', async () => {
    const end = await withOrder(result);
    expect(end).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    expect(called('cancelOrder').map((c) => c.args[0])).toEqual([
      expect.objectContaining({ reason: 'PAYMENT_TIMEOUT' }),
    ]);
    expect(called('cancelOrder')[0]!.atMs).toBeGreaterThanOrEqual(called('placeOrder')[0]!.atMs + 30 * MINUTE); // not before it
    expect(called('closePayment')).toHaveLength(0); // a callback-only provider cannot cancel a payment
    expect(called('notifyCustomer').map((c) => c.args[0])).toEqual([
      expect.objectContaining({ template: 'ORDER_CANCELLED' }),
    ]);
    expect(called('issueInvoice')).toHaveLength(0);
  });

  it('a cancel that told the customer in the same call leaves no notice owed: one activity after the timer', async () => {
    overrides.cancelOrder = async () => cancelled(true);
    const end = await withOrder(result);
    expect(end).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    expect(called('cancelOrder')).toHaveLength(1);
    expect(called('notifyCustomer')).toHaveLength(0);
  });

  it('a payment before the deadline pays: fulfillment runs, nothing is cancelled or released', async () => {
    const end = await withOrder(async (orderId) => {
      await pay(orderId);
      return result(orderId);
    });
    expect(end).toMatchObject({
      status: 'PAID',
      payments: [{ status: 'CAPTURED' }],
      fulfillment: { invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' },
    });
    expect(called('cancelOrder')).toHaveLength(0);
  });

  it('the placeOrder update answers the whole placed order, from its request and the placement: the marker keeps only the placement', async () => {
    const orderId = randomUUID();
    const answer = await (
      await stubbedWorker()
    ).runUntil(async () => {
      const placed = await placeOrder(orderId);
      await handleOf(orderId).terminate();
      return placed;
    });
    const asPlaced = await placedOrder(orderId);
    expect(answer).toEqual({ ...asPlaced, expiresAt: answer.expiresAt });
    const { events } = await handleOf(orderId).fetchHistory();
    const marker = events!.find((e) => e.markerRecordedEventAttributes)!.markerRecordedEventAttributes!;
    const recorded = JSON.parse(Buffer.from(marker.details!.result!.payloads![0]!.data!).toString());
    expect(recorded).toEqual({ ...placementOf(asPlaced), expiresAt: answer.expiresAt });
  });

  it("the run's result is what its end came to, nothing empty but needsAttention: the history keeps it", async () => {
    const expired = await withOrder(result);
    expect(expired).toEqual({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT', needsAttention: [] });
    const paid = await withOrder(async (orderId) => {
      await pay(orderId);
      return { orderId, end: await result(orderId) };
    });
    expect(paid.end).toEqual({
      status: 'PAID',
      payments: [{ paymentId: `pay-${paid.orderId}`, status: 'CAPTURED' }],
      fulfillment: { invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' },
      needsAttention: [],
    });
  });

  it('a second payment for a paid order is refunded by the same run, and the customer told', async () => {
    overrides.settlePayment = async (notice: { paymentId: string }) =>
      decided(notice.paymentId.startsWith('second') ? 'REFUND_PENDING' : 'PAID');
    const { orderId, end } = await withOrder(async (orderId) => {
      await pay(orderId);
      await pay(orderId, `second-${orderId}`);
      await pay(orderId, `second-${orderId}`); // a redelivery: dropped
      return { orderId, end: await result(orderId) };
    });
    expect(end.payments!.map((p) => p.status).sort()).toEqual(['CAPTURED', 'REFUNDED']);
    // The redelivery is dropped by the run: the history records one settlement per payment.
    expect(await recordedRuns(orderId, 'settlePayment')).toBe(2);
    // The stubs count calls by payment: a signal arriving as the run completes makes the server
    // refuse that task, and the local activities it ran run again (idempotent, as every one is).
    const paymentOf = (c: { args: unknown[] }) => (c.args[0] as { paymentId: string }).paymentId;
    expect(new Set(called('settlePayment').map(paymentOf))).toEqual(new Set([`pay-${orderId}`, `second-${orderId}`]));
    expect(new Set(called('refundPayment').map((c) => c.args[0]))).toEqual(new Set([`second-${orderId}`]));
    expect(new Set(called('notifyCustomer').map((c) => (c.args[0] as { template: string }).template))).toEqual(
      new Set(['PAYMENT_REFUNDED']),
    );
  });

  it('a refund another run holds as rejected is not told to the customer as made', async () => {
    overrides.settlePayment = async (notice: { paymentId: string }) =>
      decided(notice.paymentId.startsWith('second') ? 'REFUND_PENDING' : 'PAID');
    overrides.refundPayment = async () => ({ refunded: false, status: 'REFUND_FAILED' });
    const end = await withOrder(async (orderId) => {
      await pay(orderId);
      await pay(orderId, `second-${orderId}`);
      return result(orderId);
    });
    expect(end.payments!.map((p) => p.status).sort()).toEqual(['CAPTURED', 'REFUND_FAILED']);
    expect(called('refundPayment')).toHaveLength(1);
    expect(called('notifyCustomer')).toHaveLength(0);
  });

  it('a late settlement whose refund another run holds as rejected ends HELD_ELSEWHERE, telling the customer nothing', async () => {
    overrides.settlePayment = async () => decided('REFUND_PENDING');
    overrides.refundPayment = async () => ({ refunded: false, status: 'REFUND_FAILED' });
    const orderId = randomUUID();
    const paymentId = `late-${orderId}`;
    const end = await (
      await stubbedWorker()
    ).runUntil(
      env.client.workflow.execute(LATE_PAYMENT_WORKFLOW_TYPE, {
        workflowId: latePaymentWorkflowId(paymentId),
        taskQueue: TASK_QUEUE,
        args: [{ paymentId, orderId }],
      }),
    );
    expect(end).toEqual({ outcome: 'HELD_ELSEWHERE' });
    expect(called('notifyCustomer')).toHaveLength(0);
  });

  it('a paid signal naming no recorded payment changes nothing; the real payment of that id still pays', async () => {
    overrides.settlePayment = async () =>
      called('settlePayment').length === 1 ? { outcome: 'NOT_RECEIVED' } : decided('PAID');
    const end = await withOrder(async (orderId) => {
      await pay(orderId); // sent straight to Temporal: the database has no such payment
      await env.sleep(MINUTE);
      expect(await handleOf(orderId).query(statusQuery)).toMatchObject({ status: 'UNPAID', payments: [] });
      await pay(orderId); // the webhook has recorded it now
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }] });
    expect(called('settlePayment')).toHaveLength(2);
    expect(called('refundPayment')).toHaveLength(0);
  });

  it('a database clock behind the timer answers NOT_DUE: the run waits for the database deadline and cancels then', async () => {
    let databaseDeadline: number | undefined;
    overrides.cancelOrder = async () => {
      if (databaseDeadline !== undefined) return cancelled();
      databaseDeadline = (await serverNow()) + MINUTE;
      return { outcome: 'NOT_DUE', expiresAt: new Date(databaseDeadline).toISOString() };
    };
    const end = await withOrder(result);
    expect(end.status).toBe('CANCELLED');
    const [timerFired, cancelledThen] = called('cancelOrder');
    expect(called('cancelOrder')).toHaveLength(2);
    expect(timerFired!.atMs).toBeGreaterThanOrEqual(called('placeOrder')[0]!.atMs + 30 * MINUTE);
    expect(cancelledThen!.atMs).toBeGreaterThanOrEqual(databaseDeadline!);
  });

  it('a cancel that finds the order paid elsewhere fulfils it instead', async () => {
    overrides.cancelOrder = async () => ({ outcome: 'ALREADY_FINAL', status: 'PAID' });
    const end = await withOrder(result);
    expect(end).toMatchObject({ status: 'PAID', fulfillment: { invoice: 'DONE' } });
    expect(called('notifyCustomer')).toHaveLength(0);
  });

  it('our database failing for more than 5 minutes flags the order, keeps trying, and clears the flag once through', async () => {
    // A first round of the database preset's 3 attempts, then the same call retried by the server
    // on the outage backoff (workflows/backoff.ts): at once, then 5 s, 10 s, 20 s, … later. Its 7th
    // attempt comes 5¼ minutes in, and fails; the 8th, 3 minutes later, goes through.
    overrides.cancelOrder = async () => {
      if (called('cancelOrder').length <= 10) throw new Error('connect ECONNREFUSED (the database is down)');
      return cancelled();
    };
    const end = await withOrder(async (orderId) => {
      // Six attempts failed, 2⅔ minutes of backoff before the next: not flagged yet, and not called meanwhile.
      await env.sleep(30 * MINUTE + 4 * MINUTE);
      expect(called('cancelOrder')).toHaveLength(9);
      expect((await handleOf(orderId).query(statusQuery)).needsAttention).toEqual([]);
      const status = await result(orderId);
      expect(await needsAttentionWrites(orderId)).toEqual([true, false]);
      return status;
    });
    expect(end).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
    expect(called('cancelOrder')).toHaveLength(11);
  }, 30_000);

  it('a messaging provider that stays unavailable gives the notice up and flags it; the order still ends', async () => {
    overrides.notifyCustomer = async () => {
      throw ApplicationFailure.retryable('messaging is down', THIRD_PARTY_FAILURES.unavailable);
    };
    const end = await withOrder(result);
    expect(end.status).toBe('CANCELLED');
    expect(end.needsAttention).toEqual([expect.stringContaining('was not sent ORDER_CANCELLED')]);
    expect(called('notifyCustomer')).toHaveLength(20); // one round of the notice preset
  });

  it('a refund the provider rejects is held, keeps the run open, and is refunded when an operator retries it', async () => {
    let rejecting = true;
    overrides.settlePayment = async () => decided('REFUND_PENDING'); // a wrong amount
    overrides.refundPayment = async () => {
      if (rejecting) throw ApplicationFailure.nonRetryable('refund refused', THIRD_PARTY_FAILURES.rejected);
      return { refunded: true };
    };
    const end = await withOrder(async (orderId) => {
      const paymentId = `short-${orderId}`;
      await pay(orderId, paymentId);
      await env.sleep(31 * MINUTE);
      const held = await handleOf(orderId).query(statusQuery);
      expect(held).toMatchObject({ status: 'CANCELLED', phase: 'ending', payments: [{ status: 'REFUND_FAILED' }] });
      expect(held.needsAttention).toEqual([expect.stringContaining(`refund of ${paymentId} rejected`)]);
      expect(held.waits).toEqual([
        expect.stringMatching(new RegExp(`^Held for an operator since \\S+Z: refund of ${paymentId} rejected`)),
      ]);
      expect(await waitingFor(orderId)).toBe('OPERATOR');
      expect((await handleOf(orderId).describe()).status.name).toBe('RUNNING');
      await expect(
        handleOf(orderId).executeUpdate(retryRefundUpdate, { args: [{ paymentId: 'not-held' }] }),
      ).rejects.toMatchObject({
        cause: {
          type: 'REFUND_NOT_FAILED',
          message: BUSINESS_ERRORS.REFUND_NOT_FAILED.message,
          details: [{ paymentId: 'not-held' }],
        },
      });
      rejecting = false;
      await handleOf(orderId).executeUpdate(retryRefundUpdate, { args: [{ paymentId }] });
      const status = await result(orderId);
      expect(await waitingForWrites(orderId)).toEqual(['OPERATOR', null]); // held, then retried
      return status;
    });
    expect(end).toMatchObject({ payments: [{ status: 'REFUNDED' }], needsAttention: [] });
    expect(called('recordRefundFailure')).toHaveLength(1);
    expect(called('reopenRefund')).toHaveLength(1);
    expect(called('refundPayment')).toHaveLength(2);
  });

  it('a step given up on that completed after all (its attempt timed out while running) is DONE, not a dead letter', async () => {
    overrides.awardLoyaltyPoints = async () => {
      throw ApplicationFailure.nonRetryable('loyalty rejected the call', THIRD_PARTY_FAILURES.rejected);
    };
    overrides.markStepFailed = async () => ({ status: 'DONE', changed: false }); // the database: the earlier attempt completed it
    const end = await withOrder(async (orderId) => {
      await pay(orderId);
      await env.sleep(MINUTE);
      expect(await handleOf(orderId).query(statusQuery)).toMatchObject({
        fulfillment: { loyalty: 'DONE' },
        needsAttention: [],
      });
      return result(orderId);
    });
    expect(end).toMatchObject({
      status: 'PAID',
      fulfillment: { invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' },
    });
    expect(called('markStepFailed')).toHaveLength(1);
    expect(called('reopenStep')).toHaveLength(0);
  });

  it('an adopting run paid while its order is still being read stays PAID, without a failed workflow task', async () => {
    const orderId = randomUUID();
    // The database is down until the payment has been settled; the order then reads as it was before it.
    overrides.loadOrder = async () => {
      if (called('settlePayment').length === 0) throw new Error('connect ECONNREFUSED (the database is down)');
      return placedOrder(orderId);
    };
    const end = await (
      await stubbedWorker()
    ).runUntil(async () => {
      const handle = await env.client.workflow.start(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(orderId),
        taskQueue: TASK_QUEUE,
        args: [orderLifecycleInput(orderId, { adopt: true })],
      });
      await pay(orderId);
      const status = (await handle.result()) as OrderOutcome;
      const { events } = await handle.fetchHistory();
      expect((events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
      return status;
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }], fulfillment: { invoice: 'DONE' } });
    expect(called('cancelOrder')).toHaveLength(0);
  });

  it('a placement refused by the business ends the run as REJECTED, with nothing to undo', async () => {
    overrides.placeOrder = async () => {
      throw ApplicationFailure.nonRetryable('not enough units', 'OUT_OF_STOCK');
    };
    const orderId = randomUUID();
    await (
      await stubbedWorker()
    ).runUntil(async () => {
      await expect(placeOrder(orderId)).rejects.toMatchObject({ cause: { type: 'OUT_OF_STOCK' } });
      expect(await result(orderId)).toMatchObject({ status: 'REJECTED' });
    });
    expect(called('placeOrder')).toHaveLength(1); // a business refusal is not retried
    expect(called('cancelOrder')).toHaveLength(0);
  });
});

describe('OrderLifecycle with a provider that cancels payments: provider first at the deadline', () => {
  beforeEach(() => {
    overrides.placeOrder = async (request: { orderId: string }) =>
      placementOf({ ...(await placedOrder(request.orderId)), payment: providerPayment(request.orderId) });
  });
  const closingAnswers = (...answers: ClosingOutcome[]) => {
    overrides.closePayment = async () => answers[Math.min(called('closePayment').length - 1, answers.length - 1)]!;
  };
  const activityOrder = () => calls.map((c) => c.activity);

  it('closes the payment at the provider, and only then cancels the order and tells the customer', async () => {
    const end = await withOrder(result);
    expect(end).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT', needsAttention: [] });
    expect(activityOrder()).toEqual(['placeOrder', 'closePayment', 'cancelOrder', 'notifyCustomer']);
    expect(called('closePayment')[0]!.args[0]).toMatchObject({ reason: 'PAYMENT_TIMEOUT' });
  });

  it('the normal paths, expired with the payment closed at once and paid in time, never write WaitingFor', async () => {
    const expired = await withOrder(async (orderId) => ({ orderId, end: await result(orderId) }));
    const paid = await withOrder(async (orderId) => {
      await pay(orderId, `pi_${orderId}`);
      return { orderId, end: await result(orderId) };
    });
    expect([expired.end.status, paid.end.status]).toEqual(['CANCELLED', 'PAID']);
    expect(await waitingForWrites(expired.orderId)).toEqual([]);
    expect(await waitingForWrites(paid.orderId)).toEqual([]);
  });

  it('a provider down at the deadline: WaitingFor names the closing, the details say since when and what the provider last answered', async () => {
    let down = true;
    overrides.closePayment = async () => ({ outcome: down ? 'UNAVAILABLE' : 'CLOSED' });
    const end = await withOrder(async (orderId) => {
      // Asked at the deadline, then 5, 10 and 20 s later: four answers within the minute after it.
      await env.sleep(31 * MINUTE);
      const held = await handleOf(orderId).query(statusQuery);
      expect(held).toMatchObject({ status: 'UNPAID', phase: 'closing-payment' });
      expect(held.waitingFor).toBe('the payment provider to close the payment (or say it was paid)');
      const tries = called('closePayment').length;
      expect(tries).toBeGreaterThanOrEqual(3);
      const [wait] = held.waits;
      expect(wait).toMatch(
        new RegExp(
          `^Closing the payment at the provider since (\\S+Z) \\(last answer: unavailable, ${tries} tries\\)$`,
        ),
      );
      const since = Date.parse(/since (\S+Z)/.exec(wait!)![1]!);
      expect(since).toBeGreaterThanOrEqual(Date.parse(held.expiresAt!)); // the closing began at the deadline
      expect(since).toBeLessThanOrEqual(called('closePayment')[0]!.atMs);
      expect(await waitingFor(orderId)).toBe('PROVIDER_CLOSING');
      down = false;
      const status = await result(orderId);
      // Set once when the run began to wait on the provider, removed once when it closed: two upserts.
      expect(await waitingForWrites(orderId)).toEqual(['PROVIDER_CLOSING', null]);
      return status;
    });
    expect(end).toMatchObject({ status: 'CANCELLED' });
  }, 30_000);

  it('a payment the provider already took pays the order however late its webhook: nothing cancelled or refunded', async () => {
    overrides.closePayment = async (input: { orderId: string }) => ({
      outcome: 'PAID_AT_PROVIDER',
      paymentId: `pi_${input.orderId}`,
    });
    const end = await withOrder(async (orderId) => {
      const status = await result(orderId);
      expect(called('settlePayment').map((c) => c.args[0])).toEqual([{ paymentId: `pi_${orderId}`, orderId }]);
      return status;
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }], fulfillment: { invoice: 'DONE' } });
    expect(called('cancelOrder')).toHaveLength(0);
    expect(called('refundPayment')).toHaveLength(0);
    expect(called('notifyCustomer')).toHaveLength(0);
  });

  it('a wrong amount the provider took is refunded, and the order, which nothing else can pay, is cancelled', async () => {
    overrides.closePayment = async (input: { orderId: string }) => ({
      outcome: 'PAID_AT_PROVIDER',
      paymentId: `pi_${input.orderId}`,
    });
    overrides.settlePayment = async () => decided('REFUND_PENDING');
    const end = await withOrder(result);
    expect(end).toMatchObject({ status: 'CANCELLED', payments: [{ status: 'REFUNDED' }] });
    expect(activityOrder()).toEqual([
      'placeOrder',
      'closePayment',
      'settlePayment',
      'refundPayment',
      'notifyCustomer', // PAYMENT_REFUNDED
      'cancelOrder',
      'notifyCustomer', // ORDER_CANCELLED
    ]);
  });

  /** The closing's answers in turn, each made from the test server's clock (the last one repeats). */
  const closingAnswersAt = (...answers: Array<(nowMs: number) => ClosingOutcome>) => {
    overrides.closePayment = async () =>
      answers[Math.min(called('closePayment').length - 1, answers.length - 1)]!(await serverNow());
  };
  const inMs = (nowMs: number, ms: number) => new Date(nowMs + ms).toISOString();

  it('a customer action under way (3-D Secure) holds the order for its grace, unflagged; then the provider is asked to cancel it', async () => {
    closingAnswersAt(
      (now) => ({ outcome: 'CUSTOMER_ACTION', graceEndsAt: inMs(now, 10 * MINUTE) }),
      () => ({ outcome: 'CLOSED' }),
    );
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 5 * MINUTE);
      const held = await handleOf(orderId).query(statusQuery);
      expect(held).toMatchObject({ status: 'UNPAID', phase: 'closing-payment', needsAttention: [] });
      expect(held.waits).toEqual([expect.stringContaining('customer action under way, grace until')]);
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT', needsAttention: [] });
    const [acting, closed] = called('closePayment');
    expect(called('closePayment')).toHaveLength(2);
    expect(closed!.atMs - acting!.atMs).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(closed!.atMs - acting!.atMs).toBeLessThan(11 * MINUTE);
    expect(called('cancelOrder')[0]!.atMs).toBeGreaterThanOrEqual(closed!.atMs); // only once closed
  }, 30_000);

  it('a customer action that succeeds within its grace pays the order', async () => {
    closingAnswersAt((now) => ({ outcome: 'CUSTOMER_ACTION', graceEndsAt: inMs(now, 10 * MINUTE) }));
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 4 * MINUTE);
      await pay(orderId); // the webhook: 3-D Secure passed
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }], needsAttention: [] });
    expect(called('closePayment')).toHaveLength(1);
    expect(called('cancelOrder')).toHaveLength(0);
  }, 30_000);

  it('money on its way makes the order AWAITING_FUNDS, unflagged, rechecked hourly then backing off, and paid by its event', async () => {
    closingAnswersAt((now) => ({ outcome: 'FUNDS_IN_TRANSIT', holdEndsAt: inMs(now, 14 * DAY) }));
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 7 * HOUR + MINUTE);
      const held = await handleOf(orderId).query(statusQuery);
      expect(held).toMatchObject({ status: 'AWAITING_FUNDS', phase: 'awaiting-funds', needsAttention: [] });
      expect(await waitingFor(orderId)).toBe('FUNDS');
      expect((await handleOf(orderId).describe()).typedSearchAttributes.get(OrderStatusKey)).toBe('AWAITING_FUNDS');
      await pay(orderId); // the provider's event: the debit settled
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }], needsAttention: [] });
    // Asked at the deadline, then 1 h, 2 h and 4 h later: not every minute.
    const asked = called('closePayment').map((c) => c.atMs);
    expect(asked.slice(1).map((at, i) => Math.round((at - asked[i]!) / HOUR))).toEqual([1, 2, 4]);
    expect(called('cancelOrder')).toHaveLength(0);
  }, 30_000);

  it('money on its way for almost 14 days, then paid: one run, well under 2,000 history events', async () => {
    let holdEndsAt: string | undefined;
    closingAnswersAt((now) => ({ outcome: 'FUNDS_IN_TRANSIT', holdEndsAt: (holdEndsAt ??= inMs(now, 14 * DAY)) }));
    const { end, events } = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 14 * DAY - HOUR);
      await pay(orderId);
      const status = await result(orderId);
      return { end: status, events: (await handleOf(orderId).fetchHistory()).events?.length ?? 0 };
    });
    expect(end).toMatchObject({ status: 'PAID', needsAttention: [] });
    // An hour, then doubling to a day: 18 asks in 14 days, not 20,000.
    expect(called('closePayment')).toHaveLength(18);
    expect(events).toBeLessThan(2_000);
    console.log(`a run awaiting funds 14 days, then paid: ${events} history events`);
  }, 60_000);

  it('an adopting run that finds the order AWAITING_FUNDS goes on waiting for its funds, not fulfilling it', async () => {
    const orderId = randomUUID();
    overrides.loadOrder = async () => ({
      ...(await placedOrder(orderId)),
      status: 'AWAITING_FUNDS',
      expiresAt: new Date((await serverNow()) - HOUR).toISOString(),
      payment: providerPayment(orderId),
    });
    closingAnswersAt((now) => ({ outcome: 'FUNDS_IN_TRANSIT', holdEndsAt: inMs(now, 13 * DAY) }));
    const end = await (
      await stubbedWorker()
    ).runUntil(async () => {
      const handle = await env.client.workflow.start(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(orderId),
        taskQueue: TASK_QUEUE,
        args: [orderLifecycleInput(orderId, { adopt: true })],
      });
      await eventually(async () => called('closePayment').length === 1);
      expect(await handle.query(statusQuery)).toMatchObject({ status: 'AWAITING_FUNDS', phase: 'awaiting-funds' });
      expect(called('issueInvoice')).toHaveLength(0);
      await pay(orderId);
      return (await handle.result()) as OrderOutcome;
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }] });
  }, 30_000);

  it('money that never came (the provider closed it) cancels the order as PAYMENT_FAILED', async () => {
    closingAnswersAt(
      (now) => ({ outcome: 'FUNDS_IN_TRANSIT', holdEndsAt: inMs(now, 14 * DAY) }),
      () => ({ outcome: 'CLOSED' }),
    );
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 10 * MINUTE);
      await handleOf(orderId).signal(paymentFailedSignal, { orderId, paymentId: `pi_${orderId}` });
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_FAILED', needsAttention: [] });
    expect(called('cancelOrder')[0]!.args[0]).toMatchObject({ reason: 'PAYMENT_FAILED' });
    // The provider's word was asked for at once, not at the hourly recheck.
    const [first, second] = called('closePayment');
    expect(second!.atMs - first!.atMs).toBeLessThan(HOUR);
  }, 30_000);

  it('money still on its way at AWAITING_FUNDS_MAX: the order is cancelled with one flag, and its payment is still closed after', async () => {
    // The hold ends AWAITING_FUNDS_MAX after the closing began, whenever the provider is asked.
    let holdEndsAt: string | undefined;
    closingAnswersAt((now) => ({ outcome: 'FUNDS_IN_TRANSIT', holdEndsAt: (holdEndsAt ??= inMs(now, 14 * DAY)) }));
    overrides.closeCancelledPayment = async () =>
      called('closeCancelledPayment').length < 3 ? { outcome: 'FUNDS_IN_TRANSIT' } : { outcome: 'CLOSED' };
    const { end, events } = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 14 * DAY + MINUTE);
      const cancelled = await handleOf(orderId).query(statusQuery);
      expect(cancelled).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
      expect(cancelled.needsAttention).toEqual([expect.stringContaining("the payment's money was still on its way")]);
      const status = await result(orderId);
      const history = await handleOf(orderId).fetchHistory();
      return { end: status, events: history.events?.length ?? 0 };
    });
    expect(end).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
    expect(called('cancelOrder')).toHaveLength(1);
    expect(called('closeCancelledPayment')).toHaveLength(3);
    expect(events).toBeLessThan(2_000);
  }, 60_000);

  it('a provider down for an hour is asked at most 15 times (a task and a timer each), never more than the cap apart', async () => {
    closingAnswers({ outcome: 'UNAVAILABLE' });
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 60 * MINUTE);
      const asked = called('closePayment').map((c) => c.atMs);
      expect(asked.length).toBeGreaterThan(8); // 5 s, doubling: the questions come close at first
      expect(asked.length).toBeLessThanOrEqual(15);
      const gaps = asked.slice(1).map((at, i) => at - asked[i]!);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(PROVIDER_CAP_MS + 5_000); // the cap, plus the call itself
      expect(gaps.at(-1)).toBeGreaterThanOrEqual(PROVIDER_CAP_MS); // and reached
      await handleOf(orderId).executeUpdate(forceCancelUpdate);
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
  }, 60_000);

  it('a provider down past the deadline holds the order, flags it after 5 minutes, and a webhook payment meanwhile pays it', async () => {
    closingAnswers({ outcome: 'UNAVAILABLE' });
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 7 * MINUTE);
      const held = await handleOf(orderId).query(statusQuery);
      expect(held).toMatchObject({ status: 'UNPAID', phase: 'closing-payment' });
      expect(held.needsAttention).toEqual([expect.stringContaining('the payment provider has not answered since')]);
      await pay(orderId, `pi_${orderId}`); // the webhook: the customer paid just before the deadline
      const status = await result(orderId);
      expect(await needsAttentionWrites(orderId)).toEqual([true, false]);
      return status;
    });
    expect(end).toMatchObject({ status: 'PAID', payments: [{ status: 'CAPTURED' }], needsAttention: [] });
    expect(called('closePayment').length).toBeGreaterThan(5); // asked again and again, with a backoff
    expect(called('cancelOrder')).toHaveLength(0);
    expect(called('refundPayment')).toHaveLength(0);
  }, 30_000);

  it('an operator may force the cancel while the provider is silent, and only then', async () => {
    closingAnswers({ outcome: 'UNAVAILABLE' });
    const end = await withOrder(async (orderId) => {
      // Refused in the catalogue's words, which the API answers too.
      await expect(handleOf(orderId).executeUpdate(forceCancelUpdate)).rejects.toMatchObject({
        cause: { type: 'ORDER_NOT_CLOSING', message: BUSINESS_ERRORS.ORDER_NOT_CLOSING.message, nonRetryable: true },
      });
      await env.sleep(30 * MINUTE + 6 * MINUTE);
      expect(await handleOf(orderId).executeUpdate(forceCancelUpdate)).toEqual({ orderId, status: 'CANCELLED' });
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
    expect(called('cancelOrder')).toHaveLength(1);
  }, 30_000);

  it('a force-cancel that lands as the closing finds the deadline moved answers ORDER_NOT_CLOSING, and is not kept for the next deadline', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    overrides.closePayment = async () => {
      if (called('closePayment').length > 1) return { outcome: 'CLOSED' };
      await held; // the first closing, while the operator's force-cancel comes in
      return { outcome: 'NOT_DUE', expiresAt: new Date((await serverNow()) + MINUTE).toISOString() };
    };
    const end = await withOrder(async (orderId) => {
      await env.sleep(30 * MINUTE + 1_000);
      await eventually(async () => called('closePayment').length === 1);
      const forcing = await handleOf(orderId).startUpdate(forceCancelUpdate, {
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      release();
      await expect(forcing.result()).rejects.toMatchObject({ cause: { type: 'ORDER_NOT_CLOSING' } });
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
    // The next deadline's closing asked the provider again instead of skipping it for a stale request.
    expect(called('closePayment')).toHaveLength(2);
    expect(called('cancelOrder')).toHaveLength(1);
  }, 30_000);

  it('a provider that refuses to close the payment for good holds the order for an operator', async () => {
    overrides.closePayment = async () => {
      throw ApplicationFailure.nonRetryable('no such payment intent', THIRD_PARTY_FAILURES.rejected);
    };
    const end = await withOrder(async (orderId) => {
      await env.sleep(31 * MINUTE);
      const held = await handleOf(orderId).query(statusQuery);
      expect(held).toMatchObject({ status: 'UNPAID', phase: 'closing-payment' });
      expect(held.needsAttention).toEqual([expect.stringContaining('refused to close the payment')]);
      expect(held.waits).toEqual([expect.stringMatching(/^Held for an operator since \S+Z \(last answer: refused \(/)]);
      expect(await waitingFor(orderId)).toBe('OPERATOR');
      await handleOf(orderId).executeUpdate(forceCancelUpdate);
      return result(orderId);
    });
    expect(end).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
  }, 30_000);

  it('a payment the placement could not create is created while the order waits', async () => {
    overrides.placeOrder = async (request: { orderId: string }) =>
      placementOf({ ...(await placedOrder(request.orderId)), payment: 'PENDING' });
    overrides.createPayment = async (orderId: string) => {
      if (called('createPayment').length < 3) {
        throw ApplicationFailure.retryable('the provider is down', THIRD_PARTY_FAILURES.unavailable);
      }
      return providerPayment(orderId);
    };
    const end = await withOrder(result);
    expect(end.status).toBe('CANCELLED');
    expect(called('createPayment')).toHaveLength(3);
    expect(activityOrder().slice(-3)).toEqual(['closePayment', 'cancelOrder', 'notifyCustomer']);
  });
});
