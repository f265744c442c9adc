import { z } from 'zod';
import { limit } from './env.js';

/** What one customer may hold and ask for: anti-hoarding (the worker) and per-customer call limits (the API); 0 turns each off. */
export const CustomerLimitsSchema = z.object({
  MAX_OPEN_ORDERS_PER_CUSTOMER: limit.default(3),
  MAX_UNPAID_UNITS_PER_PRODUCT: limit.default(10),
  ORDERS_PER_MINUTE_PER_CLIENT: limit.default(10),
  READS_PER_MINUTE_PER_CLIENT: limit.default(300),
  COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER: limit.default(10),
});

export interface CustomerLimits {
  /** Unpaid orders one customer may hold at once; 0: no limit. Read by the worker (placeOrder). */
  maxOpenOrdersPerCustomer: number;
  /** Units of one product one customer may hold in unpaid orders; 0: no limit. Read by the worker (placeOrder). */
  maxUnpaidUnitsPerProduct: number;
  /** `POST /orders` calls per customer per minute; 0: no limit. Read by the API. */
  ordersPerMinutePerClient: number;
  /** `GET /orders`, `GET /orders/:id` and `POST /orders/:id/cancel` calls per customer per minute, together; 0: no limit. Read by the API. */
  readsPerMinutePerClient: number;
  /**
   * Coupon codes one customer may have refused per hour before their placements that name a coupon
   * are refused (429) until the hour ends; 0: no limit. Read by the API.
   */
  couponRefusalsPerHourPerCustomer: number;
}

export function customerLimits(e: z.infer<typeof CustomerLimitsSchema>): CustomerLimits {
  return {
    maxOpenOrdersPerCustomer: e.MAX_OPEN_ORDERS_PER_CUSTOMER,
    maxUnpaidUnitsPerProduct: e.MAX_UNPAID_UNITS_PER_PRODUCT,
    ordersPerMinutePerClient: e.ORDERS_PER_MINUTE_PER_CLIENT,
    readsPerMinutePerClient: e.READS_PER_MINUTE_PER_CLIENT,
    couponRefusalsPerHourPerCustomer: e.COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER,
  };
}
