import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROVIDER_SWEEP_SCHEDULE_ID, PROVIDER_SWEEP_WORKFLOW_TYPE } from '../../domain/messages.js';
import { chargeFakePayment } from '../../dev/fakes/payment-provider.js';
import { ensureProviderSweepSchedule } from '../../worker/provider-sweep-schedule.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The provider sweep as production runs it, on Temporal Server in real time: the Schedule every
 * worker ensures starts it every period, and a payment whose webhook is lost pays its order within
 * about one period.
 */
const TASK_QUEUE = 'orders-provider-sweep-real';
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ temporal: 'real', taskQueue: TASK_QUEUE, payments: 'cancellable' });
});
afterAll(async () => {
  await h?.close();
});

it('each worker start ensures the one provider sweep schedule; it pays an order whose webhook was lost within a period', async () => {
  const { sku } = await seedCatalog(h);
  const order = await placeOrder(h, { sku, quantity: 1 });
  const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents });
  expect(charge.outcome).toBe('SUCCEEDED'); // no webhook is posted

  const settings = { taskQueue: TASK_QUEUE, everyMs: 60_000 };
  expect(await ensureProviderSweepSchedule(h.env.client, settings)).toBe('created');
  expect(await ensureProviderSweepSchedule(h.env.client, { ...settings, everyMs: 2_000 })).toBe('updated');
  const handle = h.env.client.schedule.getHandle(PROVIDER_SWEEP_SCHEDULE_ID);
  try {
    const schedule = await handle.describe();
    expect(schedule.spec.intervals).toMatchObject([{ every: 2_000 }]);
    expect(schedule.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: PROVIDER_SWEEP_WORKFLOW_TYPE,
      taskQueue: TASK_QUEUE,
    });
    // A few periods, for a loaded machine; the order's deadline is 30 minutes away.
    await eventually(
      async () => (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).status === 'PAID',
      20_000,
    );
  } finally {
    await handle.delete();
  }
}, 60_000);
