import { Prisma, type WebhookEndpoint } from '@prisma/client';
import type { OrderEventType } from '../../domain/order-events.js';
import type { EndpointFulfillmentStep } from '../../domain/statuses.js';
import type { WebhookSettings } from '../../lib/config/webhooks.js';
import type { Db } from '../../lib/db.js';
import { stepOf, storedStep, type StoredStep } from '../../store/fulfillment-steps.js';
import { redeliver } from '../../store/webhook-deliveries.js';
import { endpointUrlRefusal } from '../../webhooks/endpoint-url.js';
import { newSigningSecret } from '../../webhooks/signing.js';
import type { ApiHandler } from '../endpoint-table.js';
import { ApiError } from '../errors.js';

/**
 * The operators' webhook endpoints and their deliveries (docs/operations.md, "Webhooks"). A secret
 * is answered once, when made; no listing shows one.
 */
type WebhookApiSettings = Pick<
  WebhookSettings,
  'allowHttpLoopback' | 'secretOverlapMs' | 'maxAttempts' | 'parallelPerEndpoint'
>;
interface Deps {
  db: Db;
  webhooks: WebhookApiSettings;
}

export const createWebhookEndpoint: ApiHandler<'createWebhookEndpoint', Deps> = async ({ body }, { db, webhooks }) => {
  const url = allowedUrl(body.url, webhooks);
  const secret = newSigningSecret();
  const endpoint = await db.webhookEndpoint.create({
    data: {
      url,
      eventTypes: body.eventTypes,
      enabled: body.enabled,
      fulfillmentStep: stored(body.fulfillmentStep),
      secret,
    },
  });
  return { endpoint: endpointView(endpoint), secret };
};

export const listWebhookEndpoints: ApiHandler<'listWebhookEndpoints', Deps> = async (_input, { db }) => {
  const endpoints = await db.webhookEndpoint.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return { endpoints: endpoints.map(endpointView) };
};

export const updateWebhookEndpoint: ApiHandler<'updateWebhookEndpoint', Deps> = async (
  { params: { endpointId }, body },
  { db, webhooks },
) => {
  const url = allowedUrl(body.url, webhooks);
  const [endpoint] = await db.webhookEndpoint.updateManyAndReturn({
    where: { id: endpointId },
    data: {
      url,
      eventTypes: body.eventTypes,
      enabled: body.enabled,
      fulfillmentStep: stored(body.fulfillmentStep),
      updatedAt: new Date(),
    },
  });
  if (!endpoint) throw new ApiError('UNKNOWN_WEBHOOK_ENDPOINT');
  return endpointView(endpoint);
};

export const deleteWebhookEndpoint: ApiHandler<'deleteWebhookEndpoint', Deps> = async (
  { params: { endpointId } },
  { db },
) => {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id: endpointId } });
  if (count === 0) throw new ApiError('UNKNOWN_WEBHOOK_ENDPOINT');
};

/** The current secret becomes the previous one, signing beside the new one until the overlap ends. */
export const rotateWebhookSecret: ApiHandler<'rotateWebhookSecret', Deps> = async (
  { params: { endpointId } },
  { db, webhooks },
) => {
  const secret = newSigningSecret();
  const [endpoint] = await db.$queryRaw<WebhookEndpoint[]>(Prisma.sql`
    UPDATE webhook_endpoints
       SET previous_secret = secret, secret = ${secret},
           previous_secret_expires_at = now() + ${webhooks.secretOverlapMs}::int * interval '1 millisecond',
           updated_at = now()
     WHERE id = ${endpointId}::uuid
    RETURNING id, url, event_types AS "eventTypes", enabled, fulfillment_step AS "fulfillmentStep",
              previous_secret_expires_at AS "previousSecretExpiresAt",
              created_at AS "createdAt", updated_at AS "updatedAt"`);
  if (!endpoint) throw new ApiError('UNKNOWN_WEBHOOK_ENDPOINT');
  return { endpoint: endpointView(endpoint), secret };
};

export const listWebhookDeliveries: ApiHandler<'listWebhookDeliveries', Deps> = async (
  { query: { status, endpointId, limit } },
  { db },
) => {
  const rows = await db.webhookDelivery.findMany({
    where: { ...(status === undefined ? {} : { status }), ...(endpointId === undefined ? {} : { endpointId }) },
    include: { event: { select: { orderId: true, type: true, seq: true } } },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    take: limit,
  });
  return {
    deliveries: rows.map((d) => ({
      id: d.id,
      eventId: d.eventId,
      endpointId: d.endpointId,
      orderId: d.event.orderId,
      type: d.event.type as OrderEventType,
      seq: d.event.seq,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
      createdAt: d.createdAt.toISOString(),
      deliveredAt: d.deliveredAt?.toISOString() ?? null,
      deadAt: d.deadAt?.toISOString() ?? null,
    })),
  };
};

export const redeliverWebhook: ApiHandler<'redeliverWebhook', Deps> = async (
  { params: { deliveryId } },
  { db, webhooks },
) => {
  const enqueued = await db.$queryRaw<{ enqueued: boolean }[]>(redeliver(deliveryId, webhooks));
  if (enqueued.length > 0) return { deliveryId, status: 'PENDING' as const };
  const delivery = await db.webhookDelivery.findUnique({ where: { id: deliveryId }, select: { status: true } });
  if (!delivery) throw new ApiError('UNKNOWN_WEBHOOK_DELIVERY');
  throw new ApiError('WEBHOOK_DELIVERY_PENDING');
};

function allowedUrl(url: string, webhooks: WebhookApiSettings): string {
  const refusal = endpointUrlRefusal(url, webhooks);
  if (refusal === undefined) return url;
  throw new ApiError('VALIDATION_FAILED', undefined, { issues: [{ path: 'url', message: refusal }] });
}

type EndpointRow = Pick<
  WebhookEndpoint,
  'id' | 'url' | 'eventTypes' | 'enabled' | 'fulfillmentStep' | 'previousSecretExpiresAt' | 'createdAt' | 'updatedAt'
>;

/** A role as the FulfillmentStep enum spells it. */
function stored(step: EndpointFulfillmentStep | null): StoredStep | null {
  return step === null ? null : storedStep(step);
}

/** An endpoint as operators see it: never its secrets. */
function endpointView(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    eventTypes: e.eventTypes as OrderEventType[],
    enabled: e.enabled,
    fulfillmentStep: e.fulfillmentStep === null ? null : (stepOf(e.fulfillmentStep) as EndpointFulfillmentStep),
    previousSecretExpiresAt:
      e.previousSecretExpiresAt && e.previousSecretExpiresAt > new Date()
        ? e.previousSecretExpiresAt.toISOString()
        : null,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}
