import { z } from 'zod';
import { MAX_ORDER_TOTAL_CENTS } from '../domain/order-total.js';
import { contract, type HandlerOf } from './endpoint.js';
import {
  CancelRequested,
  CodecPayloads,
  OperatorSessionStarted,
  CouponView,
  DeadlineExtended,
  ForceCancelled,
  OpenOrdersExtended,
  Health,
  OpenApiJson,
  OrderList,
  OrderView,
  PaymentAccepted,
  PlacedOrderView,
  ProductRead,
  ProductView,
  RefundRetried,
  SimulatedPayment,
  StepRetried,
  StripeEventAcknowledged,
  UiConfig,
  UnclaimedPaymentList,
} from './responses.js';
import {
  CodecBody,
  CouponBody,
  CouponParam,
  CreateOrderBody,
  ExtendBody,
  ExtendOpenOrdersBody,
  ListOrdersQuery,
  NamespaceHeaders,
  OrderIdParam,
  PaymentCallbackBody,
  IdempotencyKeyHeaders,
  ProductBody,
  RetryRefundParams,
  RetryStepParams,
  SkuParam,
  StripeEventBody,
  UnclaimedPaymentsQuery,
} from './schemas.js';
import { CODEC_BODY_LIMIT_KB } from './request-body.js';
import { PAYMENT_CALLBACK_PATH } from './webhook-signature.js';
import {
  DeliveryIdParam,
  EndpointIdParam,
  WebhookDeliveriesQuery,
  WebhookDeliveryList,
  WebhookEndpointBody,
  WebhookEndpointCreated,
  WebhookEndpointList,
  WebhookEndpointUpdateBody,
  WebhookEndpointView,
  WebhookRedelivered,
  WebhookSecretRotated,
} from './webhook-schemas.js';

/** Where Stripe posts its events: the URL of the webhook endpoint set up in Stripe's dashboard. */
export const STRIPE_WEBHOOK_PATH = '/webhooks/stripe';

/**
 * Every endpoint of the API, each declared once, keyed by its handler's name: its method and path,
 * who may call, what it accepts and what it answers. Each handler takes its type from its entry
 * (ApiHandler), so a schema or an access changes here only; api/endpoints.ts pairs the entries with
 * their handlers (api/routes/) for createApp to mount (api/mount-endpoints.ts), and the OpenAPI
 * document describes them (api/openapi.ts); test/api/openapi-errors.test.ts fails when a route
 * answers a code, a status or a body that its entry does not document. A path's `:id` is always an
 * order's id.
 */
export const ENDPOINT_TABLE = {
  health: contract({
    method: 'get',
    path: '/healthz',
    summary: 'Whether the database and Temporal answer',
    description:
      'From one probe shared by every caller, at most about a second old: a crowd of callers costs one probe a second.',
    access: 'public',
    success: { status: 200, description: 'both answer', schema: Health },
    otherResponses: [{ status: 503, description: 'one of them does not: its field is "down"', schema: Health }],
    errors: [],
  }),
  metricsText: contract({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics of the API process',
    access: 'scraper',
    success: { status: 200, description: 'Prometheus text format', schema: z.string(), contentType: 'text/plain' },
    errors: [],
  }),
  openApiJson: contract({
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    access: 'public',
    success: {
      status: 200,
      description: 'the OpenAPI 3.1 document of the routes this process mounts',
      schema: OpenApiJson,
    },
    errors: [],
  }),
  putProduct: contract({
    method: 'put',
    path: '/products/:sku',
    summary: 'Create or update a product',
    description: '`stock` sets the units available now.',
    access: 'operator',
    params: SkuParam,
    body: ProductBody,
    success: { status: 200, description: 'the product', schema: ProductView },
    errors: [],
  }),
  getProduct: contract({
    method: 'get',
    path: '/products/:sku',
    summary: 'A product and what is available of it',
    description:
      'Anyone may ask. With the admin token the answer adds the sales figures, `reserved` and `sold`; ' +
      'a token, when one is sent, must be valid (the admin token or a customer token), else 401.',
    access: 'public',
    tokenOptional: true,
    params: SkuParam,
    success: {
      status: 200,
      description: 'the product: to an operator `Product`, to anyone else `ProductAvailability`',
      schema: ProductRead,
    },
    errors: ['UNKNOWN_SKU'],
  }),
  putCoupon: contract({
    method: 'put',
    path: '/coupons/:code',
    summary: 'Create a single-use coupon, for anyone or for one customer, or change it',
    description:
      "With `customerId`, only that customer's orders can use the coupon: another customer's order is refused with " +
      "409 COUPON_UNAVAILABLE, as for a code that does not exist. Without it, a new coupon is anyone's and an existing " +
      'one keeps its customer. Its customer cannot change once an order holds or used it (409 COUPON_IN_USE).',
    access: 'operator',
    params: CouponParam,
    body: CouponBody,
    success: { status: 200, description: 'the coupon', schema: CouponView },
    errors: ['COUPON_IN_USE'],
  }),
  getCoupon: contract({
    method: 'get',
    path: '/coupons/:code',
    summary: 'A coupon and whether it is used',
    access: 'operator',
    params: CouponParam,
    success: { status: 200, description: 'the coupon', schema: CouponView },
    errors: ['UNKNOWN_COUPON'],
  }),
  placeOrder: contract({
    method: 'post',
    path: '/orders',
    summary: 'Place an order: reserve its stock and lock its coupon, all or nothing',
    description:
      "A customer's token places orders for that customer (`customerId` optional; another is 403); the admin token must name the customer. " +
      'The same Idempotency-Key with the same body returns the same order, with another body 422. ' +
      `A total above ${MAX_ORDER_TOTAL_CENTS} cents, the largest that can be paid, is 422 ORDER_TOTAL_TOO_LARGE; ` +
      "one above 0 and below the payment provider's smallest charge in the currency (50 cents in EUR) is 422 ORDER_TOTAL_TOO_SMALL. " +
      'A total of 0 (a coupon covers it) is PAID at placement, with no payment, and its fulfillment runs. ' +
      'With `email`, the customer is emailed when the order is placed, reminded, paid, cancelled or refunded; without it, never.',
    access: 'customerOrOperator',
    rateLimit: 'placements',
    headers: IdempotencyKeyHeaders,
    body: CreateOrderBody,
    success: {
      status: 201,
      description: 'the order, UNPAID until paid or cancelled (PAID at once when its total is 0)',
      schema: PlacedOrderView,
    },
    errors: [
      'CUSTOMER_MISMATCH',
      'UNKNOWN_SKU',
      'OUT_OF_STOCK',
      'COUPON_UNAVAILABLE',
      'TOO_MANY_COUPON_ATTEMPTS',
      'TOO_MANY_OPEN_ORDERS',
      'TOO_MANY_UNITS_HELD',
      'ORDER_TOTAL_TOO_LARGE',
      'ORDER_TOTAL_TOO_SMALL',
      'IDEMPOTENCY_KEY_REUSED',
    ],
  }),
  listOrders: contract({
    method: 'get',
    path: '/orders',
    summary: 'Orders, newest first',
    description:
      "A customer's token lists only that customer's orders (another `customerId` is 403); the admin token lists everyone's.",
    access: 'customerOrOperator',
    operatorSession: true,
    rateLimit: 'reads',
    query: ListOrdersQuery,
    success: { status: 200, description: 'the orders', schema: OrderList },
    errors: ['CUSTOMER_MISMATCH'],
  }),
  extendOpenOrders: contract({
    method: 'post',
    path: '/orders/extend',
    summary: 'Move the deadline of every open order (optionally of one customer, or due before a time)',
    description:
      'For a payment provider incident: one guarded statement adds `minutes` to every UNPAID order not yet due that matches. ' +
      'Each workflow learns its new deadline when its timer fires, and waits again.',
    access: 'operator',
    body: ExtendOpenOrdersBody,
    success: { status: 200, description: 'how many orders were extended', schema: OpenOrdersExtended },
    errors: [],
  }),
  getOrder: contract({
    method: 'get',
    path: '/orders/:id',
    summary: 'An order, its payments and its fulfillment',
    description: "Another customer's order is 404, as if it did not exist.",
    access: 'customerOrOperator',
    rateLimit: 'reads',
    params: OrderIdParam,
    success: { status: 200, description: 'the order', schema: OrderView },
    errors: ['UNKNOWN_ORDER'],
  }),
  cancelOrder: contract({
    method: 'post',
    path: '/orders/:id/cancel',
    summary: 'Cancel an unpaid order (the same guarded path as the timeout)',
    description: "Another customer's order is 404, as if it did not exist.",
    access: 'customerOrOperator',
    rateLimit: 'reads',
    params: OrderIdParam,
    success: { status: 202, description: "the cancel is with the order's workflow", schema: CancelRequested },
    errors: ['UNKNOWN_ORDER', 'ORDER_NOT_UNPAID'],
  }),
  extendDeadline: contract({
    method: 'post',
    path: '/orders/:id/extend',
    summary: "Move an unpaid order's deadline",
    description:
      'With an Idempotency-Key, the same request sent again (its answer lost) answers the same deadline and adds the minutes once.',
    access: 'operator',
    params: OrderIdParam,
    headers: IdempotencyKeyHeaders,
    body: ExtendBody,
    success: { status: 200, description: 'the new deadline', schema: DeadlineExtended },
    errors: ['UNKNOWN_ORDER', 'ORDER_NOT_UNPAID'],
  }),
  forceCancel: contract({
    method: 'post',
    path: '/orders/:id/force-cancel',
    summary: 'Cancel an order whose payment the provider cannot close now',
    description:
      'At the deadline the payment is closed at the provider before the order is cancelled. While the provider does not ' +
      'answer, the order is held (NeedsAttention after 5 minutes); this cancels it without the provider. A payment that ' +
      'still arrives is refunded. Also for an order AWAITING_FUNDS. Only for an order in those states: otherwise 409 ORDER_NOT_CLOSING. ' +
      'The run then keeps closing the payment at the provider until the provider answers.',
    access: 'operator',
    params: OrderIdParam,
    success: { status: 200, description: 'the order as its run left it', schema: ForceCancelled },
    errors: ['UNKNOWN_ORDER', 'ORDER_NOT_UNPAID', 'ORDER_NOT_CLOSING'],
  }),
  retryFulfillmentStep: contract({
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
  }),
  retryRefund: contract({
    method: 'post',
    path: '/orders/:id/payments/:paymentId/refund/retry',
    summary: 'Re-drive a refund the payment provider rejected (REFUND_FAILED)',
    access: 'operator',
    params: RetryRefundParams,
    success: { status: 202, description: 'the refund is REFUND_PENDING again', schema: RefundRetried },
    errors: ['UNKNOWN_PAYMENT', 'REFUND_NOT_FAILED'],
  }),
  listUnclaimedPayments: contract({
    method: 'get',
    path: '/payments/unclaimed',
    summary: 'Money the provider took for no order of ours, newest first',
    description:
      "A succeeded payment whose metadata names no order this service has is recorded here (HELD), counted in `unclaimed_payments_recorded_total`, and refunded by the reconciliation sweep once `UNCLAIMED_REFUND_GRACE` has passed since it arrived (REFUNDED). A refund the provider refuses leaves it REFUND_FAILED, with the provider's error, for an operator.",
    access: 'operator',
    query: UnclaimedPaymentsQuery,
    success: { status: 200, description: 'the unclaimed payments', schema: UnclaimedPaymentList },
    errors: [],
  }),
  createWebhookEndpoint: contract({
    method: 'post',
    path: '/webhook-endpoints',
    summary: 'Add an endpoint that hears of order events as signed webhooks',
    description:
      'Each event of a type it names is POSTed to `url`, signed by the Standard Webhooks scheme with the secret answered here, once (docs/api.md, "Receiving order events"). ' +
      'Events written from now on reach it; earlier ones do not.',
    access: 'operator',
    body: WebhookEndpointBody,
    success: { status: 201, description: 'the endpoint, and its signing secret', schema: WebhookEndpointCreated },
    errors: [],
  }),
  listWebhookEndpoints: contract({
    method: 'get',
    path: '/webhook-endpoints',
    summary: 'The webhook endpoints, without their secrets',
    access: 'operator',
    success: { status: 200, description: 'the endpoints', schema: WebhookEndpointList },
    errors: [],
  }),
  updateWebhookEndpoint: contract({
    method: 'put',
    path: '/webhook-endpoints/:endpointId',
    summary: "Change an endpoint's URL, event types, or whether it is enabled",
    description:
      'Deliveries under way go to the new URL at their next attempt. A disabled endpoint gets no new deliveries; those under way keep failing (and retrying) until it is enabled again or they are DEAD.',
    access: 'operator',
    params: EndpointIdParam,
    body: WebhookEndpointUpdateBody,
    success: { status: 200, description: 'the endpoint', schema: WebhookEndpointView },
    errors: ['UNKNOWN_WEBHOOK_ENDPOINT'],
  }),
  deleteWebhookEndpoint: contract({
    method: 'delete',
    path: '/webhook-endpoints/:endpointId',
    summary: 'Remove an endpoint and its deliveries',
    description: 'Its deliveries under way stop. To stop sending for a while and keep them, disable it instead.',
    access: 'operator',
    params: EndpointIdParam,
    success: { status: 204, description: 'removed' },
    errors: ['UNKNOWN_WEBHOOK_ENDPOINT'],
  }),
  rotateWebhookSecret: contract({
    method: 'post',
    path: '/webhook-endpoints/:endpointId/rotate-secret',
    summary: 'Give an endpoint a new signing secret; the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP',
    description:
      'Until `previousSecretExpiresAt` every delivery carries two signatures, one per secret, so the receiver can switch to the new secret at any time in that window. ' +
      'A secret rotated out earlier, if still in its window, stops signing now.',
    access: 'operator',
    params: EndpointIdParam,
    success: { status: 200, description: 'the endpoint, and its new secret', schema: WebhookSecretRotated },
    errors: ['UNKNOWN_WEBHOOK_ENDPOINT'],
  }),
  listWebhookDeliveries: contract({
    method: 'get',
    path: '/webhook-deliveries',
    summary: 'Webhook deliveries, newest first: under way (PENDING), DELIVERED, or DEAD (the dead letter)',
    access: 'operator',
    query: WebhookDeliveriesQuery,
    success: { status: 200, description: 'the deliveries', schema: WebhookDeliveryList },
    errors: [],
  }),
  redeliverWebhook: contract({
    method: 'post',
    path: '/webhook-deliveries/:deliveryId/redeliver',
    summary: 'Send a DEAD (or DELIVERED) delivery again, with all its attempts',
    description:
      'The delivery is PENDING again with its attempts reset, and a send job is queued in the same statement. The event keeps its id (`webhook-id`), so a receiver that had it drops the copy.',
    access: 'operator',
    params: DeliveryIdParam,
    success: { status: 202, description: 'the delivery is PENDING again', schema: WebhookRedelivered },
    errors: ['UNKNOWN_WEBHOOK_DELIVERY', 'WEBHOOK_DELIVERY_PENDING'],
  }),
  uiConfig: contract({
    method: 'get',
    path: '/ui/config',
    summary: 'What the orders page needs to know about this deployment',
    access: 'operator',
    operatorSession: true,
    success: { status: 200, description: 'the Web UI link, namespace and mode', schema: UiConfig },
    errors: [],
  }),
  startOperatorSession: contract({
    method: 'post',
    path: '/operator/session',
    summary: 'Sign in: trade the admin token for an operator session cookie',
    description:
      "The orders page sends the admin token here once and keeps the answer's cookie instead: HttpOnly, SameSite=Strict, " +
      "Secure (except on npm start's plain-http stack), HMAC-signed and expiring after OPERATOR_SESSION_TTL (8 h). " +
      'The cookie opens what the page and the Temporal Web UI call (those operations list the `operatorSession` scheme); ' +
      'a call with it that is not GET must be `Content-Type: application/json`. Changing ADMIN_TOKEN ends every session.',
    access: 'operator',
    success: {
      status: 200,
      description: 'signed in: `Set-Cookie` carries the session',
      schema: OperatorSessionStarted,
    },
    errors: [],
  }),
  endOperatorSession: contract({
    method: 'delete',
    path: '/operator/session',
    summary: 'Sign out: the browser drops the operator session cookie',
    access: 'public',
    success: { status: 204, description: 'signed out: `Set-Cookie` removes the session cookie' },
    errors: [],
  }),
  decodePayloads: codecContract('/codec/decode', 'Decrypt payloads for the Temporal Web UI', ['PAYLOAD_NOT_DECODABLE']),
  encodePayloads: codecContract(
    '/codec/encode',
    'Encrypt payloads for the Temporal Web UI (a signal or start it sends)',
    [],
  ),
  /** Mounted only for a provider that signs with PAYMENT_WEBHOOK_SECRET (api/endpoints.ts says why). */
  acceptPayment: contract({
    method: 'post',
    path: PAYMENT_CALLBACK_PATH,
    summary: "The payment provider's webhook",
    description:
      'Signed, see the security scheme; the signature is checked before the body is parsed. 202 once the payment is durably with ' +
      "the order's workflow (or, for an order whose workflow has ended, queued for refund). A redelivery of the same paymentId is 202 " +
      'with one effect. A payment for a cancelled or expired order, or of the wrong amount, is refunded exactly once. ' +
      'Mounted unless the payment provider is Stripe (`THIRD_PARTIES=stripe`), where it is 404.',
    access: 'paymentProvider',
    body: PaymentCallbackBody,
    success: { status: 202, description: 'the payment is durably handed over', schema: PaymentAccepted },
    errors: ['UNKNOWN_ORDER'],
  }),
  /** Mounted only when Stripe's webhook signing secret is configured (STRIPE_WEBHOOK_SECRET, with THIRD_PARTIES=stripe). */
  acceptStripeEvent: contract({
    method: 'post',
    path: STRIPE_WEBHOOK_PATH,
    summary: "Stripe's webhook: its events about payments and refunds",
    description:
      'Signed by Stripe, see the security scheme; the official client checks the signature on the raw body before it is read. ' +
      "A `payment_intent.succeeded` for an order takes the same path as `POST /payments/callback`: 200 once the payment is durably with the order's workflow " +
      '(or, for an order whose workflow has ended, with a settlement of its own), 500 if it could not be handed over, and Stripe redelivers. ' +
      'A `refund.failed`, or a `refund.updated` to `canceled` or `failed`, for a refund of this service is 200 `REFUND_FAILURE_ACCEPTED`: the refund is marked failed for an operator. ' +
      'A `payment_intent.payment_failed` for an order whose workflow runs is 200 `PAYMENT_FAILURE_ACCEPTED`: the workflow asks Stripe at once (a debit that bounced while the order was `AWAITING_FUNDS` cancels it, `PAYMENT_FAILED`). ' +
      "A payment counts for its order only if it is the order's own money: in the order's currency, in the configured key's mode (`livemode`), on no Connect account unless `STRIPE_CONNECT_ACCOUNT` names it, and the intent the order recorded (docs/stripe.md); any other is refunded by the order's run, never pays it. " +
      'A succeeded payment for no order of this service is 200 `UNCLAIMED_RECORDED`: listed by `GET /payments/unclaimed` and refunded after `UNCLAIMED_REFUND_GRACE`. ' +
      'Any other event is 200 `IGNORED` (logged), since a redelivery would not change it. ' +
      'Redeliveries and events out of order have one effect. Mounted only when `STRIPE_WEBHOOK_SECRET` is configured (`THIRD_PARTIES=stripe`), 404 otherwise.',
    access: 'stripe',
    body: StripeEventBody,
    success: {
      status: 200,
      description: 'the event is acknowledged: handed over, or ignored',
      schema: StripeEventAcknowledged,
    },
    errors: [],
  }),
  /** Mounted only with FAULTS_ENABLED, beside the local fakes' fault injection (dev/fakes/fault-endpoints.ts). */
  simulatePayment: contract({
    method: 'post',
    path: '/dev/orders/:id/simulate-payment',
    summary: "The orders page's pay button: the server signs a callback and posts it to its own webhook",
    access: 'operator',
    operatorSession: true,
    devOnly: true,
    params: OrderIdParam,
    success: { status: 202, description: 'the webhook accepted the simulated payment', schema: SimulatedPayment },
    errors: ['UNKNOWN_ORDER', 'CALLBACK_REFUSED'],
  }),
};

/** The type of the handler of the table's entry `K`, which needs `D` of what createApp hands over. */
export type ApiHandler<K extends keyof typeof ENDPOINT_TABLE, D> = HandlerOf<(typeof ENDPOINT_TABLE)[K], D>;

/**
 * The codec server's two routes (the Temporal codec-server protocol, docs/temporal.md): called by the
 * Web UI from its own origin with the browser's cookies, so they take the operator session and answer
 * CORS for that origin only. Their body is every payload of what the UI shows at once: up to 4 MB.
 */
function codecContract(path: string, summary: string, errors: 'PAYLOAD_NOT_DECODABLE'[]) {
  return contract({
    method: 'post',
    path,
    summary,
    description:
      'The Temporal codec-server protocol: `{payloads: [{metadata, data}]}` with base64 bytes, answered in the same form and order. ' +
      "Runs the service's own payload codec (AES-256-GCM, PAYLOAD_ENCRYPTION_KEYS); a payload that is not encrypted is decoded as it is. " +
      'Operators only: the admin token or the operator session cookie. CORS for CODEC_CORS_ORIGIN (the Web UI) alone, with credentials; ' +
      'its preflight (OPTIONS) is answered 204.',
    access: 'operator',
    operatorSession: true,
    crossOrigin: true,
    bodyLimitKb: CODEC_BODY_LIMIT_KB,
    headers: NamespaceHeaders,
    body: CodecBody,
    success: { status: 200, description: 'the payloads, run through the codec', schema: CodecPayloads },
    errors,
  });
}
