import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { OrderHarness } from './order-harness.js';

/** A product and a coupon of their own for each test, so tests sharing a database never meet. */
export async function seedCatalog(
  h: OrderHarness,
  opts: { priceCents?: number; stock?: number; discountCents?: number } = {},
) {
  const suffix = randomUUID().slice(0, 8);
  const sku = `SKU-${suffix}`;
  const couponCode = `C-${suffix}`;
  const product = await h.admin('PUT', `/products/${sku}`, {
    name: 'Widget',
    priceCents: opts.priceCents ?? 1500,
    stock: opts.stock ?? 10,
  });
  expect(product.status).toBe(200);
  const coupon = await h.admin('PUT', `/coupons/${couponCode}`, { discountCents: opts.discountCents ?? 500 });
  expect(coupon.status).toBe(200);
  return { sku, couponCode };
}

export async function placeOrder(
  h: OrderHarness,
  body: { sku: string; quantity?: number; couponCode?: string; customerId?: string; email?: string },
  headers: Record<string, string> = {},
) {
  const customerId = body.customerId ?? 'cust-1';
  const res = await h.asCustomer(
    customerId,
    'POST',
    '/orders',
    {
      customerId,
      items: [{ sku: body.sku, quantity: body.quantity ?? 2 }],
      ...(body.couponCode ? { couponCode: body.couponCode } : {}),
      ...(body.email ? { email: body.email } : {}),
    },
    headers,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; totalCents: number; expiresAt: string; workflowId: string; status: string };
}

/** The product's stock as an operator reads it: only they see `reserved` and `sold`. */
export async function stockOf(h: OrderHarness, sku: string) {
  const res = await h.admin('GET', `/products/${sku}`);
  return res.body as { available: number; reserved: number; sold: number };
}

export async function couponOf(h: OrderHarness, code: string) {
  return (await h.admin('GET', `/coupons/${code}`)).body as { status: string; orderId: string | null };
}
