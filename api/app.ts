import type { Client } from '@temporalio/client';
import express, { type Express, type Router } from 'express';
import helmet from 'helmet';
import type { CustomerTokenSettings } from '../lib/config.js';
import type { Db } from '../lib/db.js';
import type { Logger } from '../lib/logger.js';
import { CheckoutPriority } from './checkout-priority.js';
import { createApiMetrics } from './metrics.js';
import { customerTokenVerifier } from './customer-token.js';
import type { Endpoint } from './endpoint.js';
import { DEV_ENDPOINTS, ENDPOINTS } from './endpoints.js';
import { errorHandler, notFound } from './errors.js';
import { openApiRouter } from './openapi.js';
import { catalogRouter } from './routes/catalog.js';
import { fulfillmentRouter } from './routes/fulfillment.js';
import { healthRouter } from './routes/health.js';
import { metricsRouter, observeRequests } from './routes/metrics.js';
import { ordersPageRouter } from './routes/orders-page.js';
import { ordersRouter } from './routes/orders.js';
import { paymentsRouter } from './routes/payments.js';
import { refundsRouter } from './routes/refunds.js';
import { traceRequests } from './tracing.js';

export interface AppDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  adminToken: string;
  webhookSecret: string;
  customerTokens: CustomerTokenSettings;
  orderIdSecret: string;
  /** `POST /orders` calls per customer per window; 0: no limit (config: ORDERS_PER_MINUTE_PER_CLIENT, a 1-minute window). */
  ordersRateLimit: { limit: number; windowMs: number };
  /**
   * FAULTS_ENABLED (contract: dev and tests only): the local fakes' fault-injection routes and their
   * OpenAPI entries (dev/fakes), mounted as given; their presence also puts the orders page in dev
   * mode. Absent: those paths are 404 and the document leaves them out.
   */
  faultInjection?: DevRoutes | undefined;
  logger: Logger;
  /** Temporal Web UI base URL, for the orders page's links to each order's workflow. */
  temporalUiUrl: string;
  /** When a payment arrived; unset: the database clock. Tests on the time-skipping server pass its clock. */
  clock?: () => Promise<Date>;
}

/** Routes that only dev and tests mount, with what the OpenAPI document says of them. */
export interface DevRoutes {
  router: Router;
  endpoints: Endpoint[];
}

/** The HTTP API, built from its dependencies; it does not listen (server.ts and tests do). */
export function createApp(deps: AppDeps): Express {
  const routeDeps = {
    ...deps,
    faultsEnabled: deps.faultInjection !== undefined,
    metrics: createApiMetrics(deps.db),
    verifyCustomerToken: customerTokenVerifier(deps.customerTokens),
    checkoutPriority: new CheckoutPriority(deps.temporal, deps.logger),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple'); // `?a[b]=c` stays a string, never an object

  // Security headers on every answer, the orders page's above all: its script and stylesheet come
  // from this origin only, nothing inline. No upgrade-insecure-requests: the service is also
  // reached over plain HTTP (localhost, the compose network), where it would break the page's own
  // script; TLS, where there is some, is terminated in front of it.
  app.use(helmet({ contentSecurityPolicy: { directives: { styleSrc: ["'self'"], upgradeInsecureRequests: null } } }));
  app.use(traceRequests());
  app.use(observeRequests(routeDeps));
  app.use(paymentsRouter(routeDeps));
  app.use(healthRouter(routeDeps));
  app.use(metricsRouter(routeDeps));
  // The document names exactly the routes mounted here: the dev-only ones only when they are.
  app.use(
    openApiRouter(deps.faultInjection ? [...ENDPOINTS, ...DEV_ENDPOINTS, ...deps.faultInjection.endpoints] : ENDPOINTS),
  );
  app.use(catalogRouter(routeDeps));
  app.use(ordersRouter(routeDeps));
  app.use(fulfillmentRouter(routeDeps));
  app.use(refundsRouter(routeDeps));
  app.use(ordersPageRouter(routeDeps));
  if (deps.faultInjection) app.use(deps.faultInjection.router);
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
