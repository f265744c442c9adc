import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import { createOrderActivities } from '../activities/orders.js';
import { createFakeThirdParties } from '../dev/fakes/index.js';
import { loadConfig } from '../lib/config/index.js';
import { paymentAccount } from '../lib/config/third-parties.js';
import { createDb, type Db } from '../lib/db.js';
import type { PlaceOrderRequest, PlacedOrder } from '../domain/messages.js';
import { placedFrom } from '../domain/placement.js';

/**
 * The service's own activities, run in the bench process without a workflow: the baseline's
 * orders are written by the very placeOrder transaction (stock, coupon, order), and its canceller
 * compensates with the very activities the workflow uses. MockActivityEnvironment only supplies
 * the activity context their logging needs.
 */
export interface DirectActivities {
  db: Db;
  activities: ReturnType<typeof createActivities>;
  run<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R>;
  /** placeOrder with a window ending at `expiresAtMs` (a storm: many orders, one deadline). */
  placeExpiringAt(request: PlaceOrderRequest, expiresAtMs: number): Promise<PlacedOrder>;
  close(): Promise<void>;
}

export function createDirectActivities(
  databaseUrl: string,
  options: { paymentWindowMs: number; maxConnections: number },
): DirectActivities {
  const db = createDb(databaseUrl, { maxConnections: options.maxConnections });
  // The service's default limits: the baseline's placement does the same work (a lock and the counts).
  const config = loadConfig({});
  const { maxOpenOrdersPerCustomer, maxUnpaidUnitsPerProduct } = config;
  const deps: ActivityDeps = {
    db,
    paymentWindowMs: options.paymentWindowMs,
    paymentAccount: paymentAccount(config),
    unclaimedRefundGraceMs: config.unclaimedRefundGraceMs,
    maxOpenOrdersPerCustomer,
    maxUnpaidUnitsPerProduct,
    // The bench judges payments by when the signed callback arrived: the callback-only provider.
    ...createFakeThirdParties(db, 'callback-only'),
  };
  const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('WARN') });
  const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> => env.run(fn, ...args);
  return {
    db,
    activities: createActivities(deps),
    run,
    async placeExpiringAt(request, expiresAtMs) {
      const { placeOrder } = createOrderActivities({ ...deps, paymentWindowMs: Math.max(0, expiresAtMs - Date.now()) });
      return placedFrom(request, await run(placeOrder, request));
    },
    close: () => db.$disconnect(),
  };
}
