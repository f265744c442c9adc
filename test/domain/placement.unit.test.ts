import { describe, expect, it } from 'vitest';
import type { OrderForRun, PlaceOrderRequest } from '../../domain/messages.js';
import { placedFrom, placementOf } from '../../domain/placement.js';

const request: PlaceOrderRequest = {
  orderId: 'o-1',
  customerId: 'c-1',
  // Listed in another order than the placed order's lines (SKU byte order: upper case first).
  items: [
    { sku: 'b-tea', quantity: 1 },
    { sku: 'B-CUP', quantity: 3 },
    { sku: 'a-pot', quantity: 2 },
  ],
  requestHash: 'h',
};
const placed: OrderForRun = {
  id: 'o-1',
  customerId: 'c-1',
  status: 'UNPAID',
  totalCents: 1_550,
  expiresAt: '2026-12-07T06:30:00.000Z',
  couponCode: null,
  items: [
    { sku: 'B-CUP', quantity: 3, unitPriceCents: 150 },
    { sku: 'a-pot', quantity: 2, unitPriceCents: 400 },
    { sku: 'b-tea', quantity: 1, unitPriceCents: 300 },
  ],
  payment: null,
};

describe('the placement answer', () => {
  it('carries only what the placement decided: nothing its request says already', () => {
    expect(placementOf(placed)).toEqual({
      status: 'UNPAID',
      totalCents: 1_550,
      expiresAt: '2026-12-07T06:30:00.000Z',
      unitPriceCents: [150, 400, 300],
      payment: null,
    });
  });

  it('with the request gives back the placed order the update answers, its keys in the same order', () => {
    expect(JSON.stringify(placedFrom(request, placementOf(placed)))).toBe(JSON.stringify(placed));
  });

  it('gives back a coupon, the payment or its PENDING, the status of an order decided before, and the reminder', () => {
    const withCoupon = { ...request, couponCode: 'WELCOME' };
    for (const order of [
      { ...placed, couponCode: 'WELCOME', payment: { paymentId: 'pi_1', clientSecret: 'pi_1_secret' } },
      { ...placed, couponCode: 'WELCOME', payment: 'PENDING' as const },
      { ...placed, couponCode: 'WELCOME', status: 'CANCELLED' as const, reminder: { beforeMs: 60_000, sent: true } },
    ])
      expect(JSON.stringify(placedFrom(withCoupon, placementOf(order)))).toBe(JSON.stringify(order));
  });
});
