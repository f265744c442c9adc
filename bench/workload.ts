import { randomUUID } from 'node:crypto';
import type { PlaceOrderRequest } from '../domain/messages.js';
import { runSql } from '../dev/databases.js';

/**
 * The orders both paths get: one line of one of SKU_COUNT products (spread, so no single stock row
 * serialises everything) and, for every COUPON_EVERY-th order, a coupon of its own. A group's
 * orders share a customer-id prefix, which is how the bench finds them again. Each order has a
 * customer of its own, so the per-customer limits (open orders, orders per minute) never refuse
 * one, while the service still does their work on every order, as it does in production.
 */
export const SKU_COUNT = 200;
export const COUPON_EVERY = 5;
const STOCK_PER_SKU = 10_000_000;

export const GROUPS = {
  timer: 'bench-timer-',
  scan: 'bench-scan-',
  timerStorm: 'bench-storm-timer-',
  /** Not under timerStorm's prefix: the groups are found by prefix. */
  timerCrashStorm: 'bench-crash-timer-',
  /** The warm pair: the timer path again on the SDK's default workflow cache. */
  timerWarm: 'bench-warm-timer-',
  timerWarmStorm: 'bench-warm-storm-timer-',
  scanStorm: 'bench-storm-scan-',
  probe: 'bench-probe-',
  warmup: 'bench-warmup-',
} as const;

export function orderBody(
  group: string,
  i: number,
  options: { coupon?: boolean } = {},
): { customerId: string; items: Array<{ sku: string; quantity: number }>; couponCode?: string } {
  return {
    customerId: `${group}${i}`,
    items: [{ sku: `BENCH-${i % SKU_COUNT}`, quantity: 1 + (i % 3) }],
    ...(options.coupon !== false && i % COUPON_EVERY === 0 ? { couponCode: couponCode(group, i) } : {}),
  };
}

/** The request the API would build for the same body (the hash only tells replays apart). */
export function placeRequest(group: string, i: number): PlaceOrderRequest {
  return { orderId: randomUUID(), ...orderBody(group, i), requestHash: `bench-${group}${i}` };
}

function couponCode(group: string, i: number): string {
  return `${group}${i}`;
}

export async function seedCatalog(adminUrl: string): Promise<void> {
  await runSql(
    adminUrl,
    `
    INSERT INTO products (sku, name, price_cents, available, stock_added, updated_at)
    SELECT 'BENCH-' || n, 'Bench product ' || n, 500 + n, ${STOCK_PER_SKU}, ${STOCK_PER_SKU}, now()
    FROM generate_series(0, ${SKU_COUNT - 1}) AS n
    ON CONFLICT (sku) DO NOTHING`,
  );
}

/** One coupon per COUPON_EVERY-th order of the group, for `count` orders. */
export async function seedCoupons(adminUrl: string, group: string, count: number): Promise<void> {
  await runSql(
    adminUrl,
    `
    INSERT INTO coupons (code, discount_cents, updated_at)
    SELECT '${group}' || n, 100, now() FROM generate_series(0, ${count - 1}, ${COUPON_EVERY}) AS n
    ON CONFLICT (code) DO NOTHING`,
  );
}
