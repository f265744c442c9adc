import type { Db } from '../lib/db.js';
import type { ThirdParties } from '../adapters/ports/index.js';
import type { PaymentAccount } from '../lib/config/third-parties.js';
import type { PaymentHolds } from '../lib/config/orders.js';

export interface ActivityDeps extends ThirdParties {
  db: Db;
  paymentWindowMs: number;
  /** Whose money pays an order: its currency (CURRENCY) is what orders are placed and payments created in. */
  paymentAccount: PaymentAccount;
  /** How long money taken for no order of ours is held before it is refunded (UNCLAIMED_REFUND_GRACE). */
  unclaimedRefundGraceMs: number;
  /** PAYMENT_ACTION_GRACE and AWAITING_FUNDS_MAX; unset: their defaults (DEFAULT_PAYMENT_HOLDS). */
  paymentHolds?: PaymentHolds;
  /** How long before its deadline an unpaid order is reminded of (PAYMENT_REMINDER_BEFORE); unset or null: never. */
  paymentReminderBeforeMs?: number | null;
  /** Unpaid orders one customer may hold at once (MAX_OPEN_ORDERS_PER_CUSTOMER); 0: no limit. */
  maxOpenOrdersPerCustomer: number;
  /** Units of one product one customer may hold in unpaid orders (MAX_UNPAID_UNITS_PER_PRODUCT); 0: no limit. */
  maxUnpaidUnitsPerProduct: number;
  /**
   * The clock the deadline guards compare against. Unset in production: the database's own now(),
   * one clock for every instance. Tests on the time-skipping server pass that server's clock, so
   * the guard sees the same time as the workflow's timer.
   */
  clock?: () => Promise<Date>;
}

/** `null` means "the database's now()" (see ActivityDeps.clock); SQL reads it as COALESCE($asOf, now()). */
export async function asOf(deps: ActivityDeps): Promise<Date | null> {
  return deps.clock ? deps.clock() : null;
}
