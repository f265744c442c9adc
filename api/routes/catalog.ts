import { Router } from 'express';
import type { Db } from '../../lib/db.js';
import { requireAdmin } from '../auth.js';
import { ApiError, parseInput } from '../errors.js';
import { jsonBody } from '../json-body.js';
import type { CouponView, ProductView } from '../responses.js';
import { CouponBody, CouponParam, ProductBody, SkuParam } from '../schemas.js';

interface ProductRow {
  sku: string;
  name: string;
  price_cents: number;
  available: number;
  reserved: number;
  sold: number;
}

export function catalogRouter({ db, adminToken }: { db: Db; adminToken: string }): Router {
  const router = Router();
  const admin = requireAdmin(adminToken);

  router.put('/products/:sku', admin, jsonBody, async (req, res) => {
    const { sku } = parseInput(SkuParam, req.params);
    const body = parseInput(ProductBody, req.body);
    // `stock` sets the units available now; stock_added follows by the difference in the same
    // statement, so it stays equal to available + reserved + sold while orders race this call.
    const [row] = await db.$queryRaw<ProductRow[]>`
      INSERT INTO products (sku, name, price_cents, available, stock_added, updated_at)
      VALUES (${sku}, ${body.name}, ${body.priceCents}, ${body.stock}, ${body.stock}, now())
      ON CONFLICT (sku) DO UPDATE SET
        name = EXCLUDED.name, price_cents = EXCLUDED.price_cents, available = EXCLUDED.available,
        stock_added = products.stock_added + (EXCLUDED.available - products.available), updated_at = now()
      RETURNING sku, name, price_cents, available, reserved, sold`;
    res.json(productView(row!));
  });

  router.get('/products/:sku', async (req, res) => {
    const { sku } = parseInput(SkuParam, req.params);
    const product = await db.product.findUnique({ where: { sku } });
    if (!product) throw new ApiError('UNKNOWN_SKU', 'no product has that sku');
    const { name, priceCents, available, reserved, sold } = product;
    res.json({ sku, name, priceCents, available, reserved, sold } satisfies ProductView);
  });

  router.put('/coupons/:code', admin, jsonBody, async (req, res) => {
    const { code } = parseInput(CouponParam, req.params);
    const { discountCents } = parseInput(CouponBody, req.body);
    const coupon = await db.coupon.upsert({
      where: { code },
      create: { code, discountCents },
      update: { discountCents },
    });
    res.json(couponView(coupon));
  });

  router.get('/coupons/:code', admin, async (req, res) => {
    const { code } = parseInput(CouponParam, req.params);
    const coupon = await db.coupon.findUnique({ where: { code } });
    if (!coupon) throw new ApiError('UNKNOWN_COUPON');
    res.json(couponView(coupon));
  });

  return router;
}

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
}): CouponView {
  return { code: c.code, discountCents: c.discountCents, status: c.status, orderId: c.orderId };
}
