import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { afterAll, beforeAll, it } from 'vitest';
import {
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  placeOrderUpdate,
  RECONCILIATION_WORKFLOW_TYPE,
  failedRefundWorkflowId,
  latePaymentWorkflowId,
  orderLifecycleInput,
  retryFulfillmentStepUpdate,
  statusQuery,
} from '../../domain/messages.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { recordReceivedPayment } from '../../store/received-payments.js';
import type { PaymentStatus } from '../../domain/statuses.js';
import { STRIPE_WEBHOOK_PATH } from '../../api/endpoint-table.js';
import { createFakeThirdParties } from '../../dev/fakes/index.js';
import {
  chargeFakePayment,
  fakePaymentId,
  findFakePayment,
  moveFakePayment,
} from '../../dev/fakes/payment-provider.js';
import { handOverPaymentFailure } from '../../handover/payment-handover.js';
import { signedRefundFailure } from '../../dev/fakes/stripe/events.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { HISTORIES_DIR, historyToFixture } from './history-fixtures.js';

/**
 * `npm run record:histories`: runs each main path of the workflows on the time-skipping server and
 * writes its event history to histories/<name>.json, replacing what was there. The replay test
 * replays them against the current workflow code. A workflow change that alters the commands of a
 * path fails that test until the histories are recorded again, in the same commit: the change then
 * ships as a new Worker Deployment build, and runs in flight finish on the build that started them
 * (docs/architecture.md, "Rolling out a workflow change").
 */
const MINUTE = 60_000;
const TASK_QUEUE = 'orders-record';
const STRIPE_SECRET = 'whsec_record_histories';
let h: OrderHarness;
/** Holds back a replayed placement until released, for the "payment during an update at the end" path. */
let holdReplays: Promise<void> | undefined;
beforeAll(async () => {
  h = await startOrderHarness({
    taskQueue: TASK_QUEUE,
    stripeWebhookSecret: STRIPE_SECRET,
    workerDatabaseProxy: true,
    wrapActivities: (activities) => ({
      ...activities,
      async placeOrder(request) {
        if (holdReplays && (await h.db.order.count({ where: { id: request.orderId } })) > 0) await holdReplays;
        return activities.placeOrder(request);
      },
    }),
  });
});
afterAll(async () => {
  await h?.close();
});

/** Saves the history of the workflow's last run once it ends, or of its run `runId` (one that continued as new). */
async function save(name: string, workflowId: string, runId?: string): Promise<void> {
  const handle = h.env.client.workflow.getHandle(workflowId);
  await handle.result().catch(() => undefined); // a rejected placement ends the workflow normally too
  const run = runId === undefined ? handle : h.env.client.workflow.getHandle(workflowId, runId);
  await writeFile(new URL(`${name}.json`, HISTORIES_DIR), historyToFixture(await run.fetchHistory()));
  console.log(`recorded ${name}.json`);
}

const pay = (
  order: { id: string; totalCents: number },
  amountCents = order.totalCents,
  paymentId = `pay-${order.id}`,
) => h.pay({ paymentId, orderId: order.id, amountCents });

/**
 * A cold worker's first placement takes seconds (its bundle, its pools), past the second within
 * which the deadline a run was started with stands for the placed one: each worker places and
 * cancels one order first, so the recorded paths place as a warm worker does, at production's cost.
 */
async function warmUp(harness: OrderHarness, sku: string): Promise<void> {
  const order = await placeOrder(harness, { sku });
  await harness.asCustomer('cust-1', 'POST', `/orders/${order.id}/cancel`);
  await harness.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
}

it('records the main paths', async () => {
  const { sku, couponCode } = await seedCatalog(h, { stock: 100 });
  await warmUp(h, sku);

  const paid = await placeOrder(h, { sku, couponCode });
  await pay(paid);
  await save('paid-and-fulfilled', orderWorkflowId(paid.id));

  const doubly = await placeOrder(h, { sku });
  // Both arrive while the run is still fulfilling the order: the second is refunded by it.
  await Promise.all([pay(doubly), pay(doubly, doubly.totalCents, `second-${doubly.id}`)]);
  await save('double-payment-refunded', orderWorkflowId(doubly.id));

  const expired = await placeOrder(h, { sku });
  await save('expired-and-compensated', orderWorkflowId(expired.id));

  const late = await placeOrder(h, { sku });
  await h.env.sleep(30 * MINUTE + 1_000);
  await pay(late);
  await save('late-payment-refunded', orderWorkflowId(late.id));
  await save('late-payment-refunded-after-close-notified', latePaymentWorkflowId(`pay-${late.id}`));

  const short = await placeOrder(h, { sku });
  await pay(short, short.totalCents - 1);
  await save('wrong-amount-refunded-notified-then-expired', orderWorkflowId(short.id));

  const cancelled = await placeOrder(h, { sku });
  await h.asCustomer('cust-1', 'POST', `/orders/${cancelled.id}/cancel`);
  await save('customer-cancelled', orderWorkflowId(cancelled.id));

  const extended = await placeOrder(h, { sku });
  await h.env.sleep(29 * MINUTE);
  await h.admin('POST', `/orders/${extended.id}/extend`, { minutes: 10 });
  await save('extended-then-expired', orderWorkflowId(extended.id));

  await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
  const retried = await placeOrder(h, { sku });
  await pay(retried);
  await eventually(
    async () =>
      (await h.db.fulfillmentRecord.findFirst({ where: { orderId: retried.id, step: 'LOYALTY' } }))?.status ===
      'FAILED',
  );
  await h.admin('DELETE', '/admin/faults/loyalty');
  await h.env.client.workflow
    .getHandle(orderWorkflowId(retried.id))
    .executeUpdate(retryFulfillmentStepUpdate, { args: [{ step: 'loyalty' }] });
  await save('fulfillment-failed-then-retried', orderWorkflowId(retried.id));

  const rejectedId = randomUUID();
  await h.env.client.workflow
    .executeUpdateWithStart(placeOrderUpdate, {
      args: [{ orderId: rejectedId, customerId: 'c', items: [{ sku, quantity: 1000 }], requestHash: 'h' }],
      startWorkflowOperation: new WithStartWorkflowOperation(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(rejectedId),
        taskQueue: TASK_QUEUE,
        args: [orderLifecycleInput(rejectedId)],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    })
    .catch(() => undefined); // OUT_OF_STOCK
  await save('rejected-out-of-stock', orderWorkflowId(rejectedId));

  // After the order's workflow ended: a redelivered payment goes to SettleLatePayment.
  await pay(paid);
  await save('late-payment-after-close', latePaymentWorkflowId(`pay-${paid.id}`));

  const lost = await placeOrder(h, { sku });
  await h.env.client.workflow.getHandle(orderWorkflowId(lost.id)).terminate('recording: a lost workflow');
  await h.env.sleep(32 * MINUTE);
  const sweepId = `sweep-record-${sku}`;
  await h.clockStoppedClient.workflow.execute(RECONCILIATION_WORKFLOW_TYPE, {
    workflowId: sweepId,
    taskQueue: TASK_QUEUE,
    args: [{ graceMs: MINUTE, limit: 100, taskQueue: TASK_QUEUE }],
  });
  await save('reconciliation-sweep', sweepId);
  await save('adopted-by-reconciliation', orderWorkflowId(lost.id));

  // The provider rejects everything for good while a payment arrives for a cancelled order.
  const rejected = await placeOrder(h, { sku });
  await h.admin('PUT', '/admin/faults/payments', { failAlways: true, latencyMs: 2_000 });
  await h.env.sleep(30 * MINUTE + 1_000);
  await eventually(
    async () => (await h.db.order.findUniqueOrThrow({ where: { id: rejected.id } })).status === 'CANCELLED',
  );
  await pay(rejected);
  await eventually(
    async () =>
      (await h.db.payment.findUnique({ where: { paymentId: `pay-${rejected.id}` } }))?.status === 'REFUND_FAILED',
    30_000,
  );
  await h.admin('DELETE', '/admin/faults/payments');
  await h.admin('POST', `/orders/${rejected.id}/payments/pay-${rejected.id}/refund/retry`);
  await save('cancelled-then-refund-rejected-then-retried', orderWorkflowId(rejected.id));

  // A late payment whose refund the provider rejects: SettleLatePayment holds it until retried.
  await h.admin('PUT', '/admin/faults/payments', { failAlways: true });
  await pay(rejected, rejected.totalCents, `late-rejected-${rejected.id}`);
  await eventually(
    async () =>
      (await h.db.payment.findUnique({ where: { paymentId: `late-rejected-${rejected.id}` } }))?.status ===
      'REFUND_FAILED',
    30_000,
  );
  await h.admin('DELETE', '/admin/faults/payments');
  await h.admin('POST', `/orders/${rejected.id}/payments/late-rejected-${rejected.id}/refund/retry`);
  await save('late-payment-refund-rejected-then-retried', latePaymentWorkflowId(`late-rejected-${rejected.id}`));

  // A payment arrives while a replayed placement (an update) still runs at the end of the run.
  const key = { 'idempotency-key': `record-held-replay-${sku}` };
  const held = await placeOrder(h, { sku }, key);
  let release!: () => void;
  holdReplays = new Promise<void>((resolve) => (release = resolve));
  const replay = placeOrder(h, { sku }, key);
  await h.asCustomer('cust-1', 'POST', `/orders/${held.id}/cancel`);
  const heldHandle = h.clockStoppedClient.workflow.getHandle(orderWorkflowId(held.id));
  await eventually(async () => (await heldHandle.query(statusQuery)).phase === 'ending');
  await pay(held);
  release();
  holdReplays = undefined;
  await replay;
  await save('payment-during-update-at-end-refunded', orderWorkflowId(held.id));

  // The worker cannot reach the database for 15 minutes across the deadline.
  const outage = await placeOrder(h, { sku });
  await h.env.sleep(25 * MINUTE);
  await h.workerDatabase!.down();
  await pay(outage);
  await h.env.sleep(15 * MINUTE);
  await h.workerDatabase!.up();
  await save('database-outage-then-paid', orderWorkflowId(outage.id));

  // Provider first, with a provider that cancels payments (the local fake's cancellable kind).
  h.thirdParties.paymentProvider = createFakeThirdParties(h.db, 'cancellable').paymentProvider;
  const closed = await placeOrder(h, { sku });
  await save('provider-closed-then-cancelled', orderWorkflowId(closed.id));

  const paidAtProvider = await placeOrder(h, { sku });
  // The customer pays; the webhook never comes: the closing at the deadline finds the payment.
  await chargeFakePayment(h.db, { orderId: paidAtProvider.id, amountCents: paidAtProvider.totalCents });
  await save('provider-paid-at-deadline', orderWorkflowId(paidAtProvider.id));

  const silent = await placeOrder(h, { sku });
  await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
  await h.env.sleep(36 * MINUTE);
  await h.admin('POST', `/orders/${silent.id}/force-cancel`);
  await h.admin('DELETE', '/admin/faults/payments');
  await save('provider-silent-then-force-cancelled', orderWorkflowId(silent.id));

  // An hour of each outage, from a minute before the deadline: what the hour adds to the order that
  // expires with the provider answering (provider-closed-then-cancelled), in bench/cost/paths.ts.
  const providerHour = await placeOrder(h, { sku });
  await h.env.sleep(29 * MINUTE);
  await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
  await h.env.sleep(61 * MINUTE);
  await h.admin('DELETE', '/admin/faults/payments');
  await save('provider-outage-hour-then-cancelled', orderWorkflowId(providerHour.id));

  const databaseHour = await placeOrder(h, { sku });
  await h.env.sleep(29 * MINUTE);
  await h.workerDatabase!.down();
  await h.env.sleep(61 * MINUTE);
  await h.workerDatabase!.up();
  await save('database-outage-hour-then-cancelled', orderWorkflowId(databaseHour.id));

  // The provider is down from before the deadline for 36 hours: the held run continues as new, and
  // the next one closes the payment once the provider answers again.
  const longOutage = await placeOrder(h, { sku });
  const firstRun = (await h.env.client.workflow.getHandle(orderWorkflowId(longOutage.id)).describe()).runId;
  await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
  await h.env.sleep(30 * MINUTE + 36 * 60 * MINUTE);
  await h.admin('DELETE', '/admin/faults/payments');
  await save('provider-outage-continued-then-cancelled', orderWorkflowId(longOutage.id));
  await save('provider-outage-continued-as-new', orderWorkflowId(longOutage.id), firstRun);
});

it('records the payment states past the deadline', async () => {
  h.thirdParties.paymentProvider = createFakeThirdParties(h.db, 'cancellable').paymentProvider;
  const { sku } = await seedCatalog(h, { stock: 10 });
  const paidAtProvider = async (order: { id: string; totalCents: number }) => {
    const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents });
    if (charge.outcome !== 'SUCCEEDED') throw new Error(`the fake refused the payment: ${charge.outcome}`);
    return charge.payment.paymentId;
  };

  // A 3-D Secure challenge left open: its grace, then the provider cancels it.
  const acting = await placeOrder(h, { sku });
  await moveFakePayment(h.db, { orderId: acting.id, to: 'action' });
  await save('customer-action-then-cancelled-after-grace', orderWorkflowId(acting.id));

  // A debit processing at the deadline, settled a day later: its event pays the order.
  const funds = await placeOrder(h, { sku });
  await moveFakePayment(h.db, { orderId: funds.id, to: 'funds' });
  await h.env.sleep(30 * MINUTE + 24 * 60 * MINUTE);
  await pay(funds, funds.totalCents, await paidAtProvider(funds));
  await save('awaiting-funds-then-paid', orderWorkflowId(funds.id));

  // A debit that bounced: the provider's failure event, then the provider closes it.
  const bounced = await placeOrder(h, { sku });
  await moveFakePayment(h.db, { orderId: bounced.id, to: 'funds' });
  await h.env.sleep(31 * MINUTE);
  await moveFakePayment(h.db, { orderId: bounced.id, to: 'bounce' });
  await handOverPaymentFailure(h.env.client, { orderId: bounced.id, paymentId: fakePaymentId(bounced.id) });
  await save('awaiting-funds-then-failed', orderWorkflowId(bounced.id));

  // Forced while the provider was down; the customer paid meanwhile, its webhook lost: refunded.
  const forced = await placeOrder(h, { sku });
  await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
  await h.env.sleep(36 * MINUTE);
  await h.admin('POST', `/orders/${forced.id}/force-cancel`);
  await paidAtProvider(forced);
  await h.admin('DELETE', '/admin/faults/payments');
  await save('force-cancelled-then-paid-refunded', orderWorkflowId(forced.id));
});

/** Stripe's `refund.failed` for the payment's refund `refundRef`, through the webhook. */
async function refundFails(paymentId: string, refundRef: string, amountCents: number): Promise<void> {
  const { payload, signature } = signedRefundFailure({ refundRef, paymentId, amountCents }, STRIPE_SECRET);
  await h.http('POST', STRIPE_WEBHOOK_PATH, payload, { 'Stripe-Signature': signature });
}

const paymentBecomes = (paymentId: string, status: PaymentStatus) =>
  eventually(async () => (await h.db.payment.findUnique({ where: { paymentId } }))?.status === status, 30_000);

it('records a refund that failed after the provider accepted it', async () => {
  const { sku } = await seedCatalog(h, { stock: 10 });
  const order = await placeOrder(h, { sku });
  await h.env.sleep(30 * MINUTE + 1_000);
  const paymentId = `refund-failed-later-${order.id}`;
  await pay(order, order.totalCents, paymentId);
  await h.env.client.workflow.getHandle(latePaymentWorkflowId(paymentId)).result();
  const { providerRef } = await h.db.refund.findUniqueOrThrow({ where: { paymentId } });
  await refundFails(paymentId, providerRef, order.totalCents);
  await paymentBecomes(paymentId, 'REFUND_FAILED');
  await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`);
  await save('refund-failed-later-then-retried', failedRefundWorkflowId(paymentId));
});

it('records a refund failure that overtook the record of its refund', async () => {
  const { sku } = await seedCatalog(h, { stock: 10 });
  const order = await placeOrder(h, { sku });
  await h.env.sleep(30 * MINUTE + 1_000);
  const paymentId = `refund-failure-early-${order.id}`;
  await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 }); // the refund stays in flight
  try {
    await pay(order, order.totalCents, paymentId);
    await paymentBecomes(paymentId, 'REFUND_PENDING');
    // The local provider names its refund after the payment: the failure of the refund being made.
    await refundFails(paymentId, `fake-refund-${paymentId}`, order.totalCents);
    await h.env.sleep(MINUTE);
  } finally {
    await h.admin('DELETE', '/admin/faults/payments');
  }
  await h.env.client.workflow.getHandle(latePaymentWorkflowId(paymentId)).result();
  await h.env.sleep(5 * MINUTE);
  await paymentBecomes(paymentId, 'REFUND_FAILED');
  await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`);
  await save('refund-failure-before-its-record-then-retried', failedRefundWorkflowId(paymentId));
});

it('records an order placed while the provider was down, extended, then paid', async () => {
  h.thirdParties.paymentProvider = createFakeThirdParties(h.db, 'cancellable').paymentProvider;
  const { sku } = await seedCatalog(h, { stock: 10 });
  await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
  let order: { id: string; totalCents: number };
  try {
    order = await placeOrder(h, { sku, customerId: 'c-incident' }); // its payment still to be created
    await h.admin('POST', '/orders/extend', { minutes: 30, customerId: 'c-incident' });
    await h.env.sleep(30 * MINUTE + 1_000); // the old deadline: not due
    await eventually(
      async () =>
        (await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).query(statusQuery)).phase ===
        'awaiting-payment',
    );
  } finally {
    await h.admin('DELETE', '/admin/faults/payments');
  }
  await h.env.sleep(2 * MINUTE);
  await eventually(async () => (await findFakePayment(h.db.pool, { orderId: order.id })) !== null);
  const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents });
  if (charge.outcome !== 'SUCCEEDED') throw new Error(`the provider did not take the payment: ${charge.outcome}`);
  await pay(order, order.totalCents, charge.payment.paymentId);
  await save('placed-during-outage-extended-then-paid', orderWorkflowId(order.id));
});

it('records a payment recorded in time whose signal never came', async () => {
  h.thirdParties.paymentProvider = createFakeThirdParties(h.db, 'callback-only').paymentProvider;
  const { sku } = await seedCatalog(h, { stock: 10 });
  const order = await placeOrder(h, { sku });
  const arrivedAt = new Date(Date.parse(order.expiresAt) - 1_000);
  await recordReceivedPayment(
    h.db.pool,
    {
      paymentId: `signal-lost-${order.id}`,
      orderId: order.id,
      amountCents: order.totalCents,
      paidAt: arrivedAt.toISOString(),
    },
    arrivedAt,
    FAKE_PAYMENT_ACCOUNT,
  );
  await h.env.sleep(30 * MINUTE + 1_000);
  await save('paid-in-time-signal-lost', orderWorkflowId(order.id));
});

it('records a paid order adopted after its run was lost while a step was dead-lettered', async () => {
  h.thirdParties.paymentProvider = createFakeThirdParties(h.db, 'callback-only').paymentProvider;
  const { sku } = await seedCatalog(h, { stock: 10 });
  const order = await placeOrder(h, { sku });
  const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
  await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
  try {
    await pay(order);
    await eventually(async () => (await handle.query(statusQuery)).fulfillment?.loyalty === 'FAILED');
    await handle.terminate('recording: a run lost while a step waits for an operator');
    await h.env.sleep(2 * MINUTE);
    const sweepId = `sweep-record-paid-${sku}`;
    await h.clockStoppedClient.workflow.execute(RECONCILIATION_WORKFLOW_TYPE, {
      workflowId: sweepId,
      taskQueue: TASK_QUEUE,
      args: [{ graceMs: MINUTE, limit: 100, taskQueue: TASK_QUEUE }],
    });
    await eventually(async () => (await handle.query(statusQuery)).fulfillment?.loyalty === 'FAILED');
  } finally {
    await h.admin('DELETE', '/admin/faults/loyalty');
  }
  await handle.executeUpdate(retryFulfillmentStepUpdate, { args: [{ step: 'loyalty' }] });
  await save('paid-adopted-with-a-dead-letter-then-retried', orderWorkflowId(order.id));
});

it('records a placement retried with its key after the order was paid and its run ended', async () => {
  h.thirdParties.paymentProvider = createFakeThirdParties(h.db, 'callback-only').paymentProvider;
  const { sku } = await seedCatalog(h, { stock: 10 });
  const key = { 'idempotency-key': `retried-${sku}` };
  const order = await placeOrder(h, { sku }, key);
  await pay(order);
  await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
  await placeOrder(h, { sku }, key);
  await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result(); // the retry's run
  await save('placement-retried-after-its-run-ended', orderWorkflowId(order.id));
});

it('records a reminder before the deadline, then the order paid', async () => {
  // Reminders are a worker setting: a worker of its own, on a task queue of its own.
  const reminding = await startOrderHarness({
    taskQueue: `${TASK_QUEUE}-reminder`,
    paymentReminderBeforeMs: 10 * MINUTE,
  });
  try {
    const { sku } = await seedCatalog(reminding, { stock: 10 });
    await warmUp(reminding, sku);
    const order = await placeOrder(reminding, { sku });
    await reminding.env.sleep(25 * MINUTE); // past the reminder (20:00), before the deadline (30:00)
    await reminding.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents });
    const handle = reminding.env.client.workflow.getHandle(orderWorkflowId(order.id));
    await handle.result();
    await writeFile(new URL('reminded-then-paid.json', HISTORIES_DIR), historyToFixture(await handle.fetchHistory()));
    console.log('recorded reminded-then-paid.json');
  } finally {
    await reminding.close();
  }
});
