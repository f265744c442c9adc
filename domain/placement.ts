import type { OrderForRun, PlacedOrder, PlaceOrderRequest } from './messages.js';
import type { OrderStatus } from './statuses.js';

/**
 * What the placeOrder activity answers: what the placement decided, and nothing its request says
 * already. The answer is a local activity's result, which the run's history keeps beside the
 * placeOrder update's own answer (the whole placed order, which the run builds from the two with
 * placedFrom), so it would otherwise be kept twice.
 */
export interface Placement {
  status: OrderStatus;
  totalCents: number;
  /** ISO-8601; set from the database clock when the order was written. */
  expiresAt: string;
  /** Each line's unit price, the lines in SKU order (inSkuOrder), as the placed order lists them. */
  unitPriceCents: number[];
  payment: PlacedOrder['payment'];
  reminder?: OrderForRun['reminder'];
}

/**
 * SKUs in byte order, which is how both JavaScript's `<` and PostgreSQL's "C" collation compare
 * their ASCII (the database's default collation may differ): the order products are locked in, and
 * the order a placed order lists its lines in.
 */
export function inSkuOrder(a: { sku: string }, b: { sku: string }): number {
  return a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0;
}

/**
 * The placement of an order written for `request`, or for an earlier delivery of the same request
 * (the same hash: the same customer, coupon and lines, whatever order the lines were listed in).
 */
export function placementOf({ status, totalCents, expiresAt, items, payment, ...rest }: OrderForRun): Placement {
  return {
    status,
    totalCents,
    expiresAt,
    unitPriceCents: items.map((i) => i.unitPriceCents),
    payment,
    ...(rest.reminder && { reminder: rest.reminder }),
  };
}

/** The order as placed, from its request and the placement's answer: what placementOf was given. */
export function placedFrom(request: PlaceOrderRequest, placement: Placement): OrderForRun {
  return {
    id: request.orderId,
    customerId: request.customerId,
    status: placement.status,
    totalCents: placement.totalCents,
    expiresAt: placement.expiresAt,
    couponCode: request.couponCode ?? null,
    items: [...request.items]
      .sort(inSkuOrder)
      .map(({ sku, quantity }, i) => ({ sku, quantity, unitPriceCents: placement.unitPriceCents[i]! })),
    payment: placement.payment,
    ...(placement.reminder && { reminder: placement.reminder }),
  };
}
