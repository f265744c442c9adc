import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { afterAll, beforeAll, it } from 'vitest';
import {
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  placeOrderUpdate,
  RECONCILIATION_WORKFLOW_TYPE,
  refundWorkflowId,
  retryFulfillmentStepUpdate,
} from '../../workflows/messages.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { HISTORIES_DIR, historyToFixture } from './history-fixtures.js';

/**
 * `npm run record:histories`: runs each main path of the workflows on the time-skipping server and
 * writes its event history to histories/<name>.json. The replay test replays them against the
 * current workflow code, so a change that is not replay-safe fails CI. It never overwrites one: the
 * committed histories stand for workflows already running in production (delete a file to re-record it).
 */
const MINUTE = 60_000;
const TASK_QUEUE = 'orders-record';
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: TASK_QUEUE });
});
afterAll(async () => {
  await h?.close();
});

/** Writes a new fixture; an existing one is kept (it stands for workflows already running: delete it to re-record). */
async function save(name: string, workflowId: string): Promise<void> {
  const handle = h.env.client.workflow.getHandle(workflowId);
  await handle.result().catch(() => undefined); // a rejected placement ends the workflow normally too
  const history = await handle.fetchHistory();
  try {
    await writeFile(new URL(`${name}.json`, HISTORIES_DIR), historyToFixture(history), { flag: 'wx' });
    console.log(`recorded ${name}.json`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    console.log(`kept ${name}.json (committed history)`);
  }
}

const pay = (order: { id: string; totalCents: number }, amountCents = order.totalCents, paymentId = `pay-${order.id}`) =>
  h.pay({ paymentId, orderId: order.id, amountCents });

it('records the main paths', async () => {
  const { sku, couponCode } = await seedCatalog(h, { stock: 100 });

  const paid = await placeOrder(h, { sku, couponCode });
  await pay(paid);
  await save('paid-and-fulfilled', orderWorkflowId(paid.id));

  const expired = await placeOrder(h, { sku });
  await save('expired-and-compensated', orderWorkflowId(expired.id));

  const late = await placeOrder(h, { sku });
  await h.env.sleep(30 * MINUTE + 1_000);
  await pay(late);
  await save('late-payment-refunded', orderWorkflowId(late.id));
  await save('late-payment-refunded-after-close-notified', refundWorkflowId(`pay-${late.id}`));

  const short = await placeOrder(h, { sku });
  await pay(short, short.totalCents - 1);
  await save('wrong-amount-refunded-notified-then-expired', orderWorkflowId(short.id));

  const cancelled = await placeOrder(h, { sku });
  await h.http('POST', `/orders/${cancelled.id}/cancel`);
  await save('customer-cancelled', orderWorkflowId(cancelled.id));

  const extended = await placeOrder(h, { sku });
  await h.env.sleep(29 * MINUTE);
  await h.admin('POST', `/orders/${extended.id}/extend`, { minutes: 10 });
  await save('extended-then-expired', orderWorkflowId(extended.id));

  await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
  const retried = await placeOrder(h, { sku });
  await pay(retried);
  await eventually(async () => (await h.db.fulfillmentRecord.findFirst({ where: { orderId: retried.id, step: 'LOYALTY' } }))?.status === 'FAILED');
  await h.admin('DELETE', '/admin/faults/loyalty');
  await h.env.client.workflow.getHandle(orderWorkflowId(retried.id)).executeUpdate(retryFulfillmentStepUpdate, { args: [{ step: 'loyalty' }] });
  await save('fulfilment-failed-then-retried', orderWorkflowId(retried.id));

  const rejectedId = randomUUID();
  await h.env.client.workflow
    .executeUpdateWithStart(placeOrderUpdate, {
      args: [{ orderId: rejectedId, customerId: 'c', items: [{ sku, quantity: 1000 }], requestHash: 'h' }],
      startWorkflowOperation: new WithStartWorkflowOperation(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(rejectedId),
        taskQueue: TASK_QUEUE,
        args: [{ orderId: rejectedId }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    })
    .catch(() => undefined); // OUT_OF_STOCK
  await save('rejected-out-of-stock', orderWorkflowId(rejectedId));

  // After the order's workflow ended: a redelivered payment goes to SettleLatePayment.
  await pay(paid);
  await save('late-payment-after-close', refundWorkflowId(`pay-${paid.id}`));

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
});
