import { statusIn } from '../../store/guarded-sql.js';
import { COUPON_TRANSITIONS } from '../../domain/statuses.js';
import type { Db } from '../../lib/db.js';
import type { ApiHandler } from '../endpoint-table.js';
import { ApiError } from '../errors.js';
import type { CouponView, ProductView } from '../responses.js';

interface ProductRow {
  sku: string;
  name: string;
  price_cents: number;
  available: number;
  reserved: number;
  sold: number;
}

export const putProduct: ApiHandler<'putProduct', { db: Db }> = async ({ params: { sku }, body }, { db }) => {
  // `stock` sets the units available now; stock_added follows by the difference in the same
  // statement, so it stays equal to available + reserved + sold while orders race this call.
  const [row] = await db.$queryRaw<ProductRow[]>`
    INSERT INTO products (sku, name, price_cents, available, stock_added, updated_at)
    VALUES (${sku}, ${body.name}, ${body.priceCents}, ${body.stock}, ${body.stock}, now())
    ON CONFLICT (sku) DO UPDATE SET
      name = EXCLUDED.name, price_cents = EXCLUDED.price_cents, available = EXCLUDED.available,
      stock_added = products.stock_added + (EXCLUDED.available - products.available), updated_at = now()
    RETURNING sku, name, price_cents, available, reserved, sold`;
  return productView(row!);
};

/**
 * Anyone may ask, so on the public pool (api/app.ts, `publicDb`). Only an operator sees the sales
 * figures (`reserved`, `sold`): to anyone else, a customer included, they would tell how the shop sells.
 */
export const getProduct: ApiHandler<'getProduct', { publicDb: Db }> = async (
  { params: { sku }, caller },
  { publicDb },
) => {
  const product = await publicDb.product.findUnique({ where: { sku } });
  if (!product) throw new ApiError('UNKNOWN_SKU', 'no product has that sku');
  const { name, priceCents, available, reserved, sold } = product;
  if (caller?.role === 'operator') return { sku, name, priceCents, available, reserved, sold };
  return { sku, name, priceCents, available };
};

interface CouponRow {
  code: string;
  discount_cents: number;
  status: CouponView['status'];
  order_id: string | null;
  customer_id: string | null;
}

/**
 * Creates a coupon or changes it, in one statement. Its customer changes only while the coupon can
 * still be locked: one an order holds or used stays its customer's (the lock, which checks the
 * customer, cannot interleave: both update the row). Without `customerId` an existing coupon keeps
 * its customer, so a call that only changes the discount never opens a customer's coupon to anyone.
 */
export const putCoupon: ApiHandler<'putCoupon', { db: Db }> = async ({ params: { code }, body }, { db }) => {
  const keepCustomer = body.customerId === undefined;
  // `coupons.status`: the existing row's, not the proposed one's (EXCLUDED), which has a status too.
  const [row] = await db.$queryRaw<CouponRow[]>`
    INSERT INTO coupons (code, discount_cents, customer_id, updated_at)
    VALUES (${code}, ${body.discountCents}, ${body.customerId ?? null}, now())
    ON CONFLICT (code) DO UPDATE SET
      discount_cents = EXCLUDED.discount_cents,
      customer_id = CASE WHEN ${keepCustomer} THEN coupons.customer_id ELSE EXCLUDED.customer_id END,
      updated_at = now()
    WHERE ${keepCustomer} OR coupons.customer_id IS NOT DISTINCT FROM EXCLUDED.customer_id
       OR coupons.${statusIn('coupons', COUPON_TRANSITIONS.lock.from)}
    RETURNING code, discount_cents, status, order_id, customer_id`;
  if (!row) throw new ApiError('COUPON_IN_USE', undefined, { code });
  return {
    code: row.code,
    discountCents: row.discount_cents,
    status: row.status,
    orderId: row.order_id,
    customerId: row.customer_id,
  };
};

export const getCoupon: ApiHandler<'getCoupon', { db: Db }> = async ({ params: { code } }, { db }) => {
  const coupon = await db.coupon.findUnique({ where: { code } });
  if (!coupon) throw new ApiError('UNKNOWN_COUPON');
  return couponView(coupon);
};

function productView(row: ProductRow): ProductView {
  return {
    sku: row.sku,
    name: row.name,
    priceCents: row.price_cents,
    available: row.available,
    reserved: row.reserved,
    sold: row.sold,
  };
}

function couponView(c: {
  code: string;
  discountCents: number;
  status: CouponView['status'];
  orderId: string | null;
  customerId: string | null;
}): CouponView {
  return {
    code: c.code,
    discountCents: c.discountCents,
    status: c.status,
    orderId: c.orderId,
    customerId: c.customerId,
  };
}
