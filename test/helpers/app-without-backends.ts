import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Express } from 'express';
import { createApp } from '../../api/app.js';
import { fakeFaultInjection } from '../../dev/fakes/index.js';
import type { TrustProxy } from '../../lib/config/http.js';
import type { WebhookSettings } from '../../lib/config/webhooks.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import type { Db } from '../../lib/db.js';
import { createLogger } from '../../lib/logger.js';
import { PayloadEncryptionCodec } from '../../lib/payload-encryption.js';
import { PAYLOAD_KEYS } from './payload-keys.js';

export const ADMIN_TOKEN = 't';
/** The Temporal Web UI's origin, the one the codec endpoints answer CORS for. */
export const WEB_UI_ORIGIN = 'http://localhost:8233';
/** The HS256 key the app verifies customers' tokens with (dev/customer-token.ts signs them). */
export const CUSTOMER_JWT_SECRET = 's'.repeat(32);

/**
 * The app with a database and a Temporal client that throw when touched: whatever a request does
 * with either answers 500, so a test that expects anything else shows that neither was reached.
 * A test of routes that need only the database passes a real one (`db`).
 */
export function appWithoutBackends({
  faultsEnabled,
  metricsToken,
  authFailureLimit = { limit: 0, windowMs: 60_000 },
  ordersRateLimit = { limit: 0, windowMs: 60_000 },
  readsRateLimit = { limit: 0, windowMs: 60_000 },
  stripeWebhookSecret,
  trustProxy,
  trustTraceparent,
  db,
  webhooks,
}: {
  faultsEnabled: boolean;
  metricsToken?: string;
  authFailureLimit?: { limit: number; windowMs: number };
  ordersRateLimit?: { limit: number; windowMs: number };
  readsRateLimit?: { limit: number; windowMs: number };
  /** Mounts `POST /webhooks/stripe` in place of `POST /payments/callback`, as a Stripe deployment does. */
  stripeWebhookSecret?: string;
  trustProxy?: TrustProxy;
  trustTraceparent?: boolean;
  db?: Db;
  webhooks?: WebhookSettings;
}): Express {
  const untouchable = new Proxy(
    {},
    {
      get: () => {
        throw new Error('must not be used');
      },
    },
  );
  return createApp({
    db: db ?? (untouchable as Db),
    publicDb: untouchable as Db,
    temporal: untouchable as Client,
    taskQueue: 'q',
    adminToken: ADMIN_TOKEN,
    webhookSecret: stripeWebhookSecret === undefined ? 's' : undefined,
    stripeWebhookSecret,
    customerTokens: { algorithm: 'HS256', secret: CUSTOMER_JWT_SECRET, maxAgeSeconds: 3600 },
    orderIdSecret: 's'.repeat(32),
    paymentWindowMs: 30 * 60_000,
    ordersRateLimit,
    readsRateLimit,
    couponRefusalLimit: { limit: 0, windowMs: 60 * 60_000 },
    metricsToken,
    authFailureLimit,
    trustProxy,
    trustTraceparent,
    ...(faultsEnabled ? { faultInjection: fakeFaultInjection(untouchable as Db) } : {}),
    temporalUiUrl: 'http://localhost:8233',
    operatorSession: { ttlMs: 8 * 3_600_000, secureCookie: true },
    payloadCodec: new PayloadEncryptionCodec(PAYLOAD_KEYS),
    codecCorsOrigin: WEB_UI_ORIGIN,
    logger: createLogger('test', 'silent'),
    paymentAccount: FAKE_PAYMENT_ACCOUNT,
    unclaimedRefundGraceMs: 24 * 3_600_000,
    webhooks,
  });
}

/** Listens on a loopback port for the duration of `use`. */
export async function listening<T>(app: Express, use: (baseUrl: string) => Promise<T>): Promise<T> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.close();
  }
}
