import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import type { PaymentAccount } from '../../lib/config/third-parties.js';
import type { Logger } from '../../lib/logger.js';
import type { ApiMetrics } from '../metrics.js';
import { acceptVerifiedPayment } from '../../handover/provider-events.js';
import type { ApiHandler } from '../endpoint-table.js';
import { businessError } from '../errors.js';

export interface PaymentDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  metrics: ApiMetrics;
  /** Whose money pays an order (lib/config/third-parties.ts paymentAccount). */
  paymentAccount: PaymentAccount;
  /** How long money taken for no order of ours is held before the sweep refunds it (UNCLAIMED_REFUND_GRACE). */
  unclaimedRefundGraceMs: number;
  /** The arrival clock; unset: the database's now(), the clock every deadline guard uses (tests pass the test server's). */
  clock?: (() => Promise<Date>) | undefined;
}

/**
 * The payment provider's webhook; its signature was checked on the raw body before it was parsed.
 */
export const acceptPayment: ApiHandler<'acceptPayment', PaymentDeps> = async ({ body: callback }, deps) => {
  if (!(await acceptVerifiedPayment(deps, callback))) throw businessError('UNKNOWN_ORDER');
  return { accepted: true, paymentId: callback.paymentId };
};
