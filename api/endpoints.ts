import { z } from 'zod';
import type { Endpoint } from './endpoint.js';
import {
  CancelRequested,
  CouponView,
  DeadlineExtended,
  Health,
  OrderList,
  OrderView,
  PaymentAccepted,
  PlacedOrderView,
  ProductView,
  RefundRetried,
  SimulatedPayment,
  StepRetried,
  UiConfig,
} from './responses.js';
import {
  CouponBody,
  CouponParam,
  CreateOrderBody,
  ExtendBody,
  IdempotencyKey,
  ListOrdersQuery,
  OrderIdParam,
  PaymentCallbackBody,
  ProductBody,
  RetryRefundParams,
  RetryStepParams,
  SkuParam,
} from './schemas.js';

/**
 * Every route of the API, as the OpenAPI document (api/openapi.ts) describes it. The routers in
 * api/routes/ validate with the same schemas; test/api/openapi-routes.test.ts fails when a mounted
 * route is missing here or a route here is not mounted, and test/api/openapi-errors.test.ts when a
 * route answers a code, a status or a body that its entry does not document.
 */
export const ENDPOINTS: Endpoint[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Whether the database and Temporal answer',
    access: 'public',
    success: { status: 200, description: 'both answer', schema: Health },
    otherAnswers: [{ status: 503, description: 'one of them does not: its field is "down"', schema: Health }],
    errors: [],
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics of the API process',
    access: 'operator',
    success: { status: 200, description: 'Prometheus text format', schema: z.string(), contentType: 'text/plain' },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    access: 'public',
    success: {
      status: 200,
      description: 'the OpenAPI 3.1 document of the routes this process mounts',
      schema: z.record(z.string(), z.unknown()),
    },
    errors: [],
  },
  {
    method: 'put',
    path: '/products/:sku',
    summary: 'Create or update a product',
    description: '`stock` sets the units available now.',
    access: 'operator',
    params: SkuParam,
    body: ProductBody,
    success: { status: 200, description: 'the product', schema: ProductView },
    errors: [],
  },
  {
    method: 'get',
    path: '/products/:sku',
    summary: 'A product and its stock',
    access: 'public',
    params: SkuParam,
    success: {
      status: 200,
      description: 'the product; available + reserved + sold is every unit ever stocked',
      schema: ProductView,
    },
    errors: ['UNKNOWN_SKU'],
  },
  {
    method: 'put',
    path: '/coupons/:code',
    summary: 'Create a single-use coupon or change its discount',
    access: 'operator',
    params: CouponParam,
    body: CouponBody,
    success: { status: 200, description: 'the coupon', schema: CouponView },
    errors: [],
  },
  {
    method: 'get',
    path: '/coupons/:code',
    summary: 'A coupon and whether it is used',
    access: 'operator',
    params: CouponParam,
    success: { status: 200, description: 'the coupon', schema: CouponView },
    errors: ['UNKNOWN_COUPON'],
  },
  {
    method: 'post',
    path: '/orders',
    summary: 'Place an order: reserve its stock and lock its coupon, all or nothing',
    description:
      "A customer's token places orders for that customer (`customerId` optional; another is 403); the admin token must name the customer. " +
      'The same Idempotency-Key with the same body returns the same order, with another body 422. Rate-limited per customer (429 with Retry-After).',
    access: 'customerOrOperator',
    headers: z.object({ 'Idempotency-Key': IdempotencyKey.optional() }),
    body: CreateOrderBody,
    success: { status: 201, description: 'the order, UNPAID until paid or cancelled', schema: PlacedOrderView },
    errors: [
      'CUSTOMER_MISMATCH',
      'RATE_LIMITED',
      'UNKNOWN_SKU',
      'OUT_OF_STOCK',
      'COUPON_UNAVAILABLE',
      'TOO_MANY_OPEN_ORDERS',
      'IDEMPOTENCY_KEY_REUSED',
    ],
  },
  {
    method: 'get',
    path: '/orders',
    summary: 'Orders, newest first',
    description:
      "A customer's token lists only that customer's orders (another `customerId` is 403); the admin token lists everyone's.",
    access: 'customerOrOperator',
    query: ListOrdersQuery,
    success: { status: 200, description: 'the orders', schema: OrderList },
    errors: ['CUSTOMER_MISMATCH'],
  },
  {
    method: 'get',
    path: '/orders/:id',
    summary: 'An order, its payments and its fulfillment',
    description: "Another customer's order is 404, as if it did not exist.",
    access: 'customerOrOperator',
    params: OrderIdParam,
    success: { status: 200, description: 'the order', schema: OrderView },
    errors: ['UNKNOWN_ORDER'],
  },
  {
    method: 'post',
    path: '/orders/:id/cancel',
    summary: 'Cancel an unpaid order (the same guarded path as the timeout)',
    description: "Another customer's order is 404, as if it did not exist.",
    access: 'customerOrOperator',
    params: OrderIdParam,
    success: { status: 202, description: "the cancel is with the order's workflow", schema: CancelRequested },
    errors: ['UNKNOWN_ORDER', 'ORDER_NOT_UNPAID'],
  },
  {
    method: 'post',
    path: '/orders/:id/extend',
    summary: "Move an unpaid order's deadline",
    access: 'operator',
    params: OrderIdParam,
    body: ExtendBody,
    success: { status: 200, description: 'the new deadline', schema: DeadlineExtended },
    errors: ['UNKNOWN_ORDER', 'ORDER_NOT_UNPAID'],
  },
  {
    method: 'post',
    path: '/orders/:id/fulfillment/:step/retry',
    summary: 'Re-drive a FAILED fulfillment step (the dead letter)',
    access: 'operator',
    params: RetryStepParams,
    success: {
      status: 202,
      description: 'the step has left FAILED (running again, or already DONE); it completes exactly once',
      schema: StepRetried,
    },
    errors: ['UNKNOWN_ORDER', 'STEP_NOT_FAILED'],
  },
  {
    method: 'post',
    path: '/orders/:id/payments/:paymentId/refund/retry',
    summary: 'Re-drive a refund the payment provider rejected (REFUND_FAILED)',
    access: 'operator',
    params: RetryRefundParams,
    success: { status: 202, description: 'the refund is REFUND_PENDING again', schema: RefundRetried },
    errors: ['UNKNOWN_PAYMENT', 'REFUND_NOT_FAILED'],
  },
  {
    method: 'post',
    path: '/payments/callback',
    summary: "The payment provider's webhook",
    description:
      'Signed, see the security scheme; the signature is checked before the body is parsed. 202 once the payment is durably with ' +
      "the order's workflow (or, for an order whose workflow has ended, queued for refund). A redelivery of the same paymentId is 202 " +
      'with one effect. A payment for a cancelled or expired order, or of the wrong amount, is refunded exactly once.',
    access: 'paymentProvider',
    body: PaymentCallbackBody,
    success: { status: 202, description: 'the payment is durably handed over', schema: PaymentAccepted },
    errors: ['UNKNOWN_ORDER'],
  },
  {
    method: 'get',
    path: '/ui/config',
    summary: 'What the orders page needs to know about this deployment',
    access: 'operator',
    success: { status: 200, description: 'the Web UI link, namespace and mode', schema: UiConfig },
    errors: [],
  },
];

/** Routes mounted only with FAULTS_ENABLED, beside the local fakes' fault-injection endpoints (dev/fakes/fault-endpoints.ts). */
export const DEV_ENDPOINTS: Endpoint[] = [
  {
    method: 'post',
    path: '/dev/orders/:id/simulate-payment',
    summary: "The orders page's pay button: the server signs a callback and posts it to its own webhook",
    access: 'operator',
    devOnly: true,
    params: OrderIdParam,
    success: { status: 202, description: 'the webhook accepted the simulated payment', schema: SimulatedPayment },
    errors: ['UNKNOWN_ORDER', 'CALLBACK_REFUSED'],
  },
];
