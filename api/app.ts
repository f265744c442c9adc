import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { CustomerTokenSettings, OperatorSessionSettings } from '../lib/config/auth.js';
import type { TrustProxy } from '../lib/config/http.js';
import type { PaymentAccount } from '../lib/config/third-parties.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../lib/config/webhooks.js';
import type { Db } from '../lib/db.js';
import type { Logger } from '../lib/logger.js';
import { CheckoutPriority } from './checkout-priority.js';
import { couponAttemptLimit, type CouponAttempts } from './coupon-attempts.js';
import { webUiCors, type WebUiCors } from './cors.js';
import { customerTokenVerifier, type VerifyCustomerToken } from './customer-token.js';
import { withDeps, type Endpoint } from './endpoint.js';
import { CALLBACK_ENDPOINTS, DEV_ENDPOINTS, ENDPOINTS, STRIPE_ENDPOINTS } from './endpoints.js';
import { errorHandler, notFound } from './errors.js';
import { healthCheck, type HealthCheck } from './health-check.js';
import { createApiMetrics, type ApiMetrics } from './metrics.js';
import { mountEndpoints } from './mount-endpoints.js';
import { observeRequests } from './observe-requests.js';
import { openApiDocument, type OpenApiDocument } from './openapi.js';
import { operatorSessions, type OperatorSessions } from './operator-session.js';
import { ordersPageFiles } from './routes/orders-page.js';
import { traceRequests } from './tracing.js';

export interface AppDeps {
  /** The main pool: the payment webhook, checkout, the operators' routes. */
  db: Db;
  /**
   * A small pool of its own for the reads anyone may make without a token (GET /products/:sku), so
   * that a crowd of them queues there and never in front of the webhook and checkout on `db`
   * (config: DATABASE_PUBLIC_POOL_SIZE).
   */
  publicDb: Db;
  temporal: Client;
  taskQueue: string;
  adminToken: string;
  /** The payment callback's HMAC key (config: PAYMENT_WEBHOOK_SECRET); unset (Stripe): `POST /payments/callback` is not mounted (404). */
  webhookSecret?: string | undefined;
  /** Stripe's signing secret for `POST /webhooks/stripe` (config: STRIPE_WEBHOOK_SECRET); unset: that route is not mounted (404). */
  stripeWebhookSecret?: string | undefined;
  customerTokens: CustomerTokenSettings;
  orderIdSecret: string;
  /** How long an order stays unpaid (config: PAYMENT_WINDOW): its run is started with the deadline it expects. */
  paymentWindowMs: number;
  /** Order placements per customer per window; 0: no limit (config: ORDERS_PER_MINUTE_PER_CLIENT, a 1-minute window). */
  ordersRateLimit: { limit: number; windowMs: number };
  /**
   * A customer's other order calls (GET /orders, GET /orders/:id, POST /orders/:id/cancel) per
   * window, one count for the three; 0: no limit (config: READS_PER_MINUTE_PER_CLIENT, a 1-minute
   * window). They query the main pool: unlimited, one token could take every connection from the
   * webhook and checkout.
   */
  readsRateLimit: { limit: number; windowMs: number };
  /**
   * Coupon codes refused per customer per window before that customer's placements naming a coupon
   * are refused (api/coupon-attempts.ts); 0: no limit (config: COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER,
   * a 1-hour window).
   */
  couponRefusalLimit: { limit: number; windowMs: number };
  /** Prometheus's bearer token for /metrics (config: METRICS_TOKEN); unset: only the admin token. */
  metricsToken?: string | undefined;
  /** Guessed bearer tokens per client address per window before its further guesses are 429 (config: AUTH_FAILURES_PER_MINUTE_PER_ADDRESS); 0: no limit. */
  authFailureLimit: { limit: number; windowMs: number };
  /** Express's `trust proxy`, which decides the client address the throttle counts (config: TRUST_PROXY); unset: false. */
  trustProxy?: TrustProxy | undefined;
  /** Whether a request's `traceparent` is continued (config: TRUST_TRACEPARENT); unset: false, each request starts its own trace. */
  trustTraceparent?: boolean | undefined;
  /**
   * FAULTS_ENABLED (contract: dev and tests only): the local fakes' fault-injection endpoints
   * (dev/fakes), mounted and documented with the API's dev-only ones; their presence also puts the
   * orders page in dev mode. Absent: those paths are 404 and the document leaves them out.
   */
  faultInjection?: FaultInjection | undefined;
  logger: Logger;
  /** Temporal Web UI base URL, for the orders page's links to each order's workflow. */
  temporalUiUrl: string;
  /** The operator session cookie the orders page signs in for (config: OPERATOR_SESSION_TTL). */
  operatorSession: OperatorSessionSettings;
  /** The codec the codec endpoints run for the Web UI: the one the service's clients and workers use. */
  payloadCodec: PayloadCodec;
  /** The one origin that may call the codec endpoints with credentials (config: CODEC_CORS_ORIGIN). */
  codecCorsOrigin: string;
  /**
   * When a payment arrived (unset: the database clock), and the time an order's expected deadline
   * is reckoned from (unset: this process's clock). Tests on the time-skipping server pass its clock.
   */
  clock?: () => Promise<Date>;
  /** Whose money pays an order (lib/config/third-parties.ts paymentAccount): the webhooks refund any other. */
  paymentAccount: PaymentAccount;
  /** How long money for no order of ours is held before it is refunded (config: UNCLAIMED_REFUND_GRACE). */
  unclaimedRefundGraceMs: number;
  /** The webhook endpoints' URL rule, secret overlap and send jobs (config: WEBHOOK_*); unset: the defaults. */
  webhooks?: WebhookSettings | undefined;
}

/** Endpoints that only dev and tests mount, their handlers' dependencies bound (withDeps). */
export interface FaultInjection {
  endpoints: Endpoint[];
}

/** What the handlers of the API's own endpoints (api/endpoints.ts) may need. */
export interface ApiDeps extends AppDeps {
  webhooks: WebhookSettings;
  faultsEnabled: boolean;
  metrics: ApiMetrics;
  verifyCustomerToken: VerifyCustomerToken;
  checkoutPriority: CheckoutPriority;
  couponAttempts: CouponAttempts;
  openApiDocument: OpenApiDocument;
  healthCheck: HealthCheck;
  operatorSessions: OperatorSessions;
  webUiCors: WebUiCors;
}

/** The HTTP API, built from its dependencies; it does not listen (server.ts and tests do). */
export function createApp(deps: AppDeps): Express {
  const ownEndpoints = [
    ...ENDPOINTS,
    ...(deps.webhookSecret === undefined ? [] : CALLBACK_ENDPOINTS),
    ...(deps.stripeWebhookSecret === undefined ? [] : STRIPE_ENDPOINTS),
    ...(deps.faultInjection ? DEV_ENDPOINTS : []),
  ];
  const devEndpoints = deps.faultInjection?.endpoints ?? [];
  const apiDeps: ApiDeps = {
    ...deps,
    webhooks: deps.webhooks ?? DEFAULT_WEBHOOK_SETTINGS,
    faultsEnabled: deps.faultInjection !== undefined,
    metrics: createApiMetrics(deps.db),
    verifyCustomerToken: customerTokenVerifier(deps.customerTokens),
    checkoutPriority: new CheckoutPriority(deps.temporal, deps.logger),
    couponAttempts: couponAttemptLimit(deps.couponRefusalLimit),
    healthCheck: healthCheck(deps),
    operatorSessions: operatorSessions(deps.adminToken, deps.operatorSession),
    webUiCors: webUiCors(deps.codecCorsOrigin),
    // The document names exactly the endpoints mounted here: the callback, Stripe's and the dev-only ones only when they are.
    openApiDocument: openApiDocument([...ownEndpoints, ...devEndpoints]),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple'); // `?a[b]=c` stays a string, never an object
  // Which X-Forwarded-For hops req.ip believes (none by default): the throttle counts per req.ip.
  app.set('trust proxy', deps.trustProxy ?? false);

  // Security headers on every answer, the orders page's above all: its script and stylesheet come
  // from this origin only, nothing inline. No upgrade-insecure-requests: the service is also
  // reached over plain HTTP (localhost, the compose network), where it would break the page's own
  // script; TLS, where there is some, is terminated in front of it.
  app.use(helmet({ contentSecurityPolicy: { directives: { styleSrc: ["'self'"], upgradeInsecureRequests: null } } }));
  app.use(traceRequests({ trustTraceparent: deps.trustTraceparent ?? false }));
  app.use(observeRequests(apiDeps));
  app.use(mountEndpoints([...withDeps(ownEndpoints, apiDeps), ...devEndpoints], apiDeps));
  app.use(ordersPageFiles);
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
