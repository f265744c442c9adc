import { z } from 'zod';
import { ORDER_EVENT_TYPES } from '../domain/order-events.js';
import { ENDPOINT_FULFILLMENT_STEPS, WEBHOOK_DELIVERY_STATUSES } from '../domain/statuses.js';

/** What the admin API's webhook endpoints accept and answer (docs/operations.md, "Webhooks"). */

const timestamp = z.iso.datetime({ offset: true });

export const EndpointIdParam = z.object({ endpointId: z.uuid().transform((id) => id.toLowerCase()) });
export const DeliveryIdParam = z.object({ deliveryId: z.uuid().transform((id) => id.toLowerCase()) });

const url = z.string().trim().min(1).max(2048).meta({
  description:
    'https, without credentials or a fragment; plain http only to a loopback host (localhost, 127.0.0.1, [::1]) where WEBHOOK_ALLOW_HTTP_LOOPBACK allows it. Checked by the service: a refusal is 400 VALIDATION_FAILED naming `url`',
});
const eventTypes = z
  .array(z.enum(ORDER_EVENT_TYPES))
  .min(1)
  .max(ORDER_EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, 'each event type once')
  .meta({ description: 'the order events this endpoint hears of, each once' });

const fulfillmentStep = z.enum(ENDPOINT_FULFILLMENT_STEPS).nullable();
const FULFILLMENT_STEP_MEANING =
  "the shop's invoicing (`invoice`) or loyalty (`loyalty`) system: that fulfilment step delivers the order's `order.paid` to it, and the general deliveries do not; null: no role";

export const WebhookEndpointBody = z.strictObject({
  url,
  eventTypes,
  enabled: z.boolean().default(true).meta({ description: 'default true; a disabled endpoint gets no new deliveries' }),
  fulfillmentStep: fulfillmentStep.default(null).meta({ description: `default null; ${FULFILLMENT_STEP_MEANING}` }),
});

/**
 * A change states every field: a PUT that left `enabled` out would otherwise enable the endpoint
 * again, and one that left `fulfillmentStep` out would take the shop's invoicing off its step.
 */
export const WebhookEndpointUpdateBody = WebhookEndpointBody.extend({
  enabled: z.boolean().meta({ description: 'false: the endpoint gets no new deliveries' }),
  fulfillmentStep: fulfillmentStep.meta({ description: FULFILLMENT_STEP_MEANING }),
});

export const WebhookDeliveriesQuery = z.object({
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  endpointId: z
    .uuid()
    .transform((id) => id.toLowerCase())
    .optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const WebhookEndpointView = z.strictObject({
  id: z.uuid(),
  url: z.string(),
  eventTypes: z.array(z.enum(ORDER_EVENT_TYPES)),
  enabled: z.boolean(),
  fulfillmentStep: fulfillmentStep.meta({ description: FULFILLMENT_STEP_MEANING }),
  /** Until when the secret before the last rotation still signs beside the current one; null: none does. */
  previousSecretExpiresAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

const secret = z.string().startsWith('whsec_').meta({
  description:
    'the signing secret (`whsec_` and base64), answered this once: keep it where the receiver verifies signatures',
});

export const WebhookEndpointCreated = z.strictObject({ endpoint: WebhookEndpointView, secret });

export const WebhookEndpointList = z.strictObject({
  endpoints: z.array(WebhookEndpointView).meta({ description: 'oldest first; no secrets' }),
});

export const WebhookSecretRotated = z.strictObject({
  endpoint: WebhookEndpointView,
  secret,
});

export const WebhookDeliveryView = z.strictObject({
  id: z.uuid(),
  eventId: z.uuid().meta({ description: "the event's id: the `webhook-id` header of every attempt" }),
  endpointId: z.uuid(),
  orderId: z.uuid(),
  type: z.enum(ORDER_EVENT_TYPES),
  seq: z.int(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: z.int(),
  lastStatusCode: z.int().nullable(),
  lastError: z.string().nullable(),
  lastAttemptAt: timestamp.nullable(),
  createdAt: timestamp,
  deliveredAt: timestamp.nullable(),
  deadAt: timestamp.nullable(),
});

export const WebhookDeliveryList = z.strictObject({
  deliveries: z.array(WebhookDeliveryView).meta({ description: 'newest first' }),
});

export const WebhookRedelivered = z.strictObject({ deliveryId: z.uuid(), status: z.literal('PENDING') });
