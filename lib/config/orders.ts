import { z } from 'zod';
import { ConfigError, duration, nonEmpty } from './env.js';
import { DEV_ORDER_ID_SECRET, hmacKey, secret } from './secrets.js';

/** The orders' own rules: their ids, how long one may stay unpaid, and the sweeps that catch stranded ones and lost events. */
export const OrdersSchema = z.object({
  PAYMENT_WINDOW: nonEmpty.default('30m'),
  // Addition (docs/api.md, "Who may call what"): order ids.
  ORDER_ID_SECRET: hmacKey.optional(),
  RECONCILE_EVERY: nonEmpty.default('2m'),
  RECONCILE_GRACE: nonEmpty.default('1m'),
  PROVIDER_SWEEP_EVERY: nonEmpty.default('1m'),
  // How long a payment under way holds its order (docs/stripe.md, "Past the deadline").
  PAYMENT_ACTION_GRACE: nonEmpty.default('10m'),
  AWAITING_FUNDS_MAX: nonEmpty.default('336h'), // 14 days
  // How long before the deadline an unpaid order's customer is reminded (docs/operations.md); unset: never.
  PAYMENT_REMINDER_BEFORE: nonEmpty.optional(),
});

/** How long a payment under way at the deadline holds its order (docs/stripe.md, "Past the deadline"). */
export interface PaymentHolds {
  /** A customer in a 3-D Secure challenge or a redirect at the deadline has this long to finish it. */
  actionGraceMs: number;
  /** Money on its way (a debit, a voucher, a transfer) holds the order at most this long past the deadline. */
  awaitingFundsMaxMs: number;
}

export const DEFAULT_PAYMENT_HOLDS: PaymentHolds = { actionGraceMs: 10 * 60_000, awaitingFundsMaxMs: 14 * 86_400_000 };

export interface OrderSettings {
  paymentWindowMs: number;
  /** HMAC key that turns (customer, Idempotency-Key) into an order id nobody else can compute. */
  orderIdSecret: string;
  reconciliation: {
    /** How often the safety-net sweep runs. */
    everyMs: number;
    /** How far past its deadline an UNPAID order must be before the sweep considers it stranded. */
    graceMs: number;
  };
  /** How often the provider sweep reads the payment provider's undelivered events (PROVIDER_SWEEP_EVERY). */
  providerSweepEveryMs: number;
  paymentHolds: PaymentHolds;
  /** How long before its deadline an unpaid order is reminded of (PAYMENT_REMINDER_BEFORE); null: no reminders. */
  paymentReminderBeforeMs: number | null;
}

export function orderSettings(e: z.infer<typeof OrdersSchema>, embedded: boolean): OrderSettings {
  const providerSweepEveryMs = duration('PROVIDER_SWEEP_EVERY', e.PROVIDER_SWEEP_EVERY);
  if (providerSweepEveryMs < 10_000 || providerSweepEveryMs > 3_600_000)
    throw new ConfigError('PROVIDER_SWEEP_EVERY: must be from 10s to 1h');
  const paymentWindowMs = duration('PAYMENT_WINDOW', e.PAYMENT_WINDOW);
  const paymentReminderBeforeMs =
    e.PAYMENT_REMINDER_BEFORE === undefined ? null : duration('PAYMENT_REMINDER_BEFORE', e.PAYMENT_REMINDER_BEFORE);
  // A lead as long as the window would fall at or before the placement: no order would ever be reminded.
  if (paymentReminderBeforeMs !== null && paymentReminderBeforeMs >= paymentWindowMs)
    throw new ConfigError('PAYMENT_REMINDER_BEFORE: must be shorter than PAYMENT_WINDOW');
  return {
    orderIdSecret: secret('ORDER_ID_SECRET', e.ORDER_ID_SECRET, DEV_ORDER_ID_SECRET, embedded),
    paymentWindowMs,
    reconciliation: {
      everyMs: duration('RECONCILE_EVERY', e.RECONCILE_EVERY),
      graceMs: duration('RECONCILE_GRACE', e.RECONCILE_GRACE),
    },
    providerSweepEveryMs,
    paymentHolds: {
      actionGraceMs: duration('PAYMENT_ACTION_GRACE', e.PAYMENT_ACTION_GRACE),
      awaitingFundsMaxMs: duration('AWAITING_FUNDS_MAX', e.AWAITING_FUNDS_MAX),
    },
    paymentReminderBeforeMs,
  };
}
