import { StartupError } from '../startup-error.js';
import type { ChaosClient } from './client.js';

/** Several SKUs with plenty of stock, and one so scarce that orders for it are refused until stock comes back. */
const PRODUCTS = [
  { sku: 'CHAOS-TEA', priceCents: 1200, stock: 100_000 },
  { sku: 'CHAOS-MUG', priceCents: 850, stock: 100_000 },
  { sku: 'CHAOS-KETTLE', priceCents: 2500, stock: 100_000 },
  { sku: 'CHAOS-SPOON', priceCents: 399, stock: 100_000 },
  { sku: 'CHAOS-SCARCE', priceCents: 4999, stock: 6 },
] as const;
export const SCARCE_SKU = 'CHAOS-SCARCE';
const COUPON_DISCOUNT_CENTS = 200;

export interface ChaosCatalog {
  skus: string[];
  /** Single-use codes handed out in turn; undefined once they are used up. */
  nextCoupon(): string | undefined;
}

export async function stockCatalog(client: ChaosClient, coupons: number): Promise<ChaosCatalog> {
  for (const p of PRODUCTS) {
    await expectOk(
      client.admin('PUT', `/products/${p.sku}`, { name: p.sku, priceCents: p.priceCents, stock: p.stock }),
      `PUT /products/${p.sku}`,
    );
  }
  const codes: string[] = [];
  for (let i = 0; i < coupons; i++) {
    const code = `CHAOS-${i}`;
    await expectOk(
      client.admin('PUT', `/coupons/${code}`, { discountCents: COUPON_DISCOUNT_CENTS }),
      `PUT /coupons/${code}`,
    );
    codes.push(code);
  }
  return { skus: PRODUCTS.map((p) => p.sku), nextCoupon: () => codes.shift() };
}

async function expectOk(answer: Promise<{ status: number; body: unknown }>, what: string): Promise<void> {
  const { status, body } = await answer;
  if (status !== 200) throw new StartupError(`${what} answered ${status}: ${JSON.stringify(body)}`);
}
