import type { ApiDeps } from './app.js';
import { handled, type Endpoint } from './endpoint.js';
import { ENDPOINT_TABLE as TABLE } from './endpoint-table.js';
import { getCoupon, getProduct, putCoupon, putProduct } from './routes/catalog.js';
import { decodePayloads, encodePayloads } from './routes/codec.js';
import { extendOpenOrders } from './routes/extend-open-orders.js';
import { retryFulfillmentStep } from './routes/fulfillment.js';
import { health } from './routes/health.js';
import { metricsText } from './routes/metrics.js';
import { openApiJson } from './routes/openapi.js';
import { endOperatorSession, startOperatorSession } from './routes/operator-session.js';
import { simulatePayment, uiConfig } from './routes/orders-page.js';
import { cancelOrder, extendDeadline, forceCancel, getOrder, listOrders, placeOrder } from './routes/orders.js';
import { acceptPayment } from './routes/payments.js';
import { retryRefund } from './routes/refunds.js';
import { acceptStripeEvent } from './routes/stripe-webhook.js';
import { listUnclaimedPayments } from './routes/unclaimed-payments.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhook,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from './routes/webhook-endpoints.js';

/**
 * The endpoints of the table (api/endpoint-table.ts), each with its handler (api/routes/), in the
 * groups createApp mounts; the compiler holds each handler to its entry. A path's methods are listed
 * together: the OpenAPI document lists them in this order.
 */
export const ENDPOINTS: Endpoint<ApiDeps>[] = [
  handled(TABLE.health, health),
  handled(TABLE.metricsText, metricsText),
  handled(TABLE.openApiJson, openApiJson),
  handled(TABLE.putProduct, putProduct),
  handled(TABLE.getProduct, getProduct),
  handled(TABLE.putCoupon, putCoupon),
  handled(TABLE.getCoupon, getCoupon),
  handled(TABLE.placeOrder, placeOrder),
  handled(TABLE.listOrders, listOrders),
  handled(TABLE.extendOpenOrders, extendOpenOrders),
  handled(TABLE.getOrder, getOrder),
  handled(TABLE.cancelOrder, cancelOrder),
  handled(TABLE.extendDeadline, extendDeadline),
  handled(TABLE.forceCancel, forceCancel),
  handled(TABLE.retryFulfillmentStep, retryFulfillmentStep),
  handled(TABLE.retryRefund, retryRefund),
  handled(TABLE.listUnclaimedPayments, listUnclaimedPayments),
  handled(TABLE.createWebhookEndpoint, createWebhookEndpoint),
  handled(TABLE.listWebhookEndpoints, listWebhookEndpoints),
  handled(TABLE.updateWebhookEndpoint, updateWebhookEndpoint),
  handled(TABLE.deleteWebhookEndpoint, deleteWebhookEndpoint),
  handled(TABLE.rotateWebhookSecret, rotateWebhookSecret),
  handled(TABLE.listWebhookDeliveries, listWebhookDeliveries),
  handled(TABLE.redeliverWebhook, redeliverWebhook),
  handled(TABLE.uiConfig, uiConfig),
  handled(TABLE.startOperatorSession, startOperatorSession),
  handled(TABLE.endOperatorSession, endOperatorSession),
  handled(TABLE.decodePayloads, decodePayloads),
  handled(TABLE.encodePayloads, encodePayloads),
];

/**
 * The contract's payment webhook, mounted only for a provider that signs with PAYMENT_WEBHOOK_SECRET
 * (the local fakes). With Stripe it is not mounted (404): Stripe's events come to its own webhook, and
 * a second key that could mark orders paid would be one more secret to lose for nothing.
 */
export const CALLBACK_ENDPOINTS: Endpoint<ApiDeps>[] = [handled(TABLE.acceptPayment, acceptPayment)];

/** Mounted only when Stripe's webhook signing secret is configured (STRIPE_WEBHOOK_SECRET, with THIRD_PARTIES=stripe). */
export const STRIPE_ENDPOINTS: Endpoint<ApiDeps>[] = [handled(TABLE.acceptStripeEvent, acceptStripeEvent)];

/** Mounted only with FAULTS_ENABLED, beside the local fakes' fault injection (dev/fakes/fault-endpoints.ts). */
export const DEV_ENDPOINTS: Endpoint<ApiDeps>[] = [handled(TABLE.simulatePayment, simulatePayment)];
