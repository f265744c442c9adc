import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTION_KINDS, billableActions, noActions, type Actions } from '../../bench/cost/actions.js';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { NeedsAttentionKey, WaitingForKey } from '../../domain/search-attributes.js';
import { findFakePayment } from '../../dev/fakes/payment-provider.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Long waits stay cheap and bounded, on the time-skipping server: an order held for days by an
 * outage asks again on a capped backoff. Held by the provider, its run continues as new before its
 * history grows long, so every run of it stays small; held by our own database, its call is
 * retried by the server, which writes nothing to the history while the outage lasts.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** What every run of an order must stay under, whatever it waits through. */
const EVENTS_PER_RUN_LIMIT = 2_000;
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ payments: 'cancellable', workerDatabaseProxy: true });
});
afterAll(async () => {
  await h?.close();
});

const handleOf = (orderId: string) => h.clockStoppedClient.workflow.getHandle(orderWorkflowId(orderId));

/** The histories of every run of the order's workflow, first to last, following its continue-as-new chain back. */
async function runsOf(orderId: string): Promise<temporal.api.history.v1.IHistoryEvent[][]> {
  const workflowId = orderWorkflowId(orderId);
  const runs: temporal.api.history.v1.IHistoryEvent[][] = [];
  let runId: string | undefined;
  do {
    const events = (await h.env.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    runs.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  } while (runId);
  return runs;
}

/** Local activities (one marker each, a round of attempts) and all events, over every run. */
function tally(runs: temporal.api.history.v1.IHistoryEvent[][]) {
  const events = runs.flat();
  return {
    runs: runs.length,
    events: events.length,
    rounds: events.filter((e) => e.markerRecordedEventAttributes).length,
    largestRun: Math.max(...runs.map((r) => r.length)),
  };
}

/** The Temporal Cloud actions of every run of the order, by kind. */
async function actionsOf(orderId: string): Promise<Actions> {
  const counted = noActions();
  for (const events of await runsOf(orderId)) {
    const run = billableActions({ events });
    for (const kind of [...ACTION_KINDS, 'total'] as const) counted[kind] += run[kind];
  }
  return counted;
}

/** The order's runs, whatever the outage of `hours` cost: more than one run, each bounded, at most 30 rounds an hour. */
async function expectBoundedRuns(orderId: string, outage: string, hours: number): Promise<void> {
  const figures = tally(await runsOf(orderId));
  console.log(`${outage}:`, figures, 'rounds an hour:', (figures.rounds / hours).toFixed(1));
  expect(figures.runs).toBeGreaterThan(1);
  expect(figures.largestRun).toBeLessThan(EVENTS_PER_RUN_LIMIT);
  expect(figures.rounds / hours).toBeLessThanOrEqual(30);
}

describe('long waits', () => {
  it('holds an order through a 3-day provider outage at the deadline in bounded runs, then closes it', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-3-days' });
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 }); // the provider's API is down
    try {
      await h.env.sleep(30 * MINUTE + 1_000);
      await eventually(async () => (await handleOf(order.id).query(statusQuery)).phase === 'closing-payment');
      await h.env.sleep(72 * HOUR);
      const held = await handleOf(order.id).query(statusQuery);
      expect(held).toMatchObject({ status: 'UNPAID', phase: 'closing-payment' });
      // The run that holds it now is a later one, and still says since when the order is held.
      expect(held.waits).toEqual([expect.stringMatching(/^Closing the payment .* since /)]);
      expect(held.needsAttention).toEqual([expect.stringContaining('the payment provider has not answered since')]);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    await h.env.sleep(11 * MINUTE); // the next question, at most PROVIDER_BACKOFF's cap away, reaches the provider
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
    // The last run started with the attributes the run before it left (flagged, waiting on the
    // provider), and cleared them.
    const { typedSearchAttributes } = await handleOf(order.id).describe();
    expect(typedSearchAttributes.get(NeedsAttentionKey)).toBe(false);
    expect(typedSearchAttributes.get(WaitingForKey) ?? undefined).toBeUndefined();
    expect(await findFakePayment(h.db.pool, { orderId: order.id })).toMatchObject({ status: 'CANCELLED' });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0 });

    await expectBoundedRuns(order.id, '3-day provider outage', 72);
  }, 600_000);

  it("keeps closing a force-cancelled order's payment through a 3-day provider outage in bounded runs", async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-forced-3-days' });
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 }); // the provider's API is down
    try {
      await h.env.sleep(30 * MINUTE + 6 * MINUTE);
      const forced = await h.admin('POST', `/orders/${order.id}/force-cancel`);
      expect(forced.status, JSON.stringify(forced.body)).toBe(200);
      await h.env.sleep(72 * HOUR);
      // Cancelled and released at once; its payment, which nobody must pay now, is still being closed.
      expect(await handleOf(order.id).query(statusQuery)).toMatchObject({
        status: 'CANCELLED',
        phase: 'closing-payment',
      });
      expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0 });
      expect(await findFakePayment(h.db.pool, { orderId: order.id })).toMatchObject({ status: 'OPEN' });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    await h.env.sleep(11 * MINUTE); // the next question, at most PROVIDER_BACKOFF's cap away, reaches the provider
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'CANCELLED' });
    expect(await findFakePayment(h.db.pool, { orderId: order.id })).toMatchObject({ status: 'CANCELLED' });

    await expectBoundedRuns(order.id, '3-day provider outage after a forced cancel', 72);
  }, 600_000);

  it('rides out a database outage of 10 hours across the deadline in one small run, then cancels the order', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-db-10h' });
    await h.env.sleep(25 * MINUTE);
    await h.workerDatabase!.down();
    try {
      await h.env.sleep(10 * HOUR);
      expect((await handleOf(order.id).query(statusQuery)).needsAttention).toEqual([
        expect.stringContaining('keeps failing'),
      ]);
    } finally {
      await h.workerDatabase!.up();
    }
    // The next attempt, at most the backoff's cap away, reaches the database.
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0 });

    const figures = tally(await runsOf(order.id));
    const actions = (await actionsOf(order.id)).total;
    console.log('10-hour database outage:', figures, 'actions:', actions, 'an hour:', (actions / 10).toFixed(1));
    expect(figures.runs).toBe(1);
    expect(figures.events).toBeLessThan(200);
    expect(actions / 10).toBeLessThanOrEqual(30);
  }, 600_000);

  it('an hour of database outage at the deadline costs the order at most 30 actions more than its expiry', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const calm = await placeOrder(h, { sku, quantity: 1, customerId: 'c-db-calm' });
    await h.env.sleep(31 * MINUTE);
    expect(await handleOf(calm.id).result()).toMatchObject({ status: 'CANCELLED' });

    const held = await placeOrder(h, { sku, quantity: 1, customerId: 'c-db-1h' });
    await h.env.sleep(29 * MINUTE);
    await h.workerDatabase!.down();
    try {
      await h.env.sleep(61 * MINUTE); // from a minute before the deadline: its cancel fails for an hour
    } finally {
      await h.workerDatabase!.up();
    }
    expect(await handleOf(held.id).result()).toMatchObject({ status: 'CANCELLED', needsAttention: [] });

    const expiry = await actionsOf(calm.id);
    const withOutage = await actionsOf(held.id);
    console.log('an hour of database outage:', { expiry, withOutage });
    expect(withOutage.total - expiry.total).toBeLessThanOrEqual(30);
  }, 600_000);
});
