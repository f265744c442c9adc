import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities, type Activities } from '../../activities/index.js';
import { createFakeThirdParties } from '../../dev/fakes/index.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import type { FakePaymentsMode } from '../../lib/config/third-parties.js';
import type { Db } from '../../lib/db.js';
import type { OrderForRun, PlaceOrderRequest } from '../../domain/messages.js';
import { placedFrom } from '../../domain/placement.js';

/**
 * The real activities on `db` with the local fakes, as the worker builds them (30-minute window;
 * the callback-only provider unless `payments` says otherwise).
 * No anti-hoarding limit unless given: these tests place many unpaid orders for one customer.
 */
export function realActivities(
  db: Db,
  {
    maxOpenOrdersPerCustomer = 0,
    maxUnpaidUnitsPerProduct = 0,
    payments = 'callback-only',
  }: { maxOpenOrdersPerCustomer?: number; maxUnpaidUnitsPerProduct?: number; payments?: FakePaymentsMode } = {},
): Activities {
  return createActivities({
    db,
    paymentWindowMs: 30 * 60_000,
    paymentAccount: FAKE_PAYMENT_ACCOUNT,
    unclaimedRefundGraceMs: 24 * 3_600_000,
    maxOpenOrdersPerCustomer,
    maxUnpaidUnitsPerProduct,
    ...createFakeThirdParties(db, payments),
  });
}

const quiet = new DefaultLogger('WARN');

/** Runs an activity the way the worker would, with an activity context for its logger. */
export function runActivity<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment({}, { logger: quiet }).run(fn, ...args);
}

/** Runs placeOrder, and answers the placed order as the workflow builds it from the request and the answer. */
export async function placeWith(
  activities: Pick<Activities, 'placeOrder'>,
  request: PlaceOrderRequest,
): Promise<OrderForRun> {
  return placedFrom(request, await runActivity(activities.placeOrder, request));
}
