import { Prisma } from '@prisma/client';
import type { OrderEventType } from '../domain/order-events.js';
import { WEBHOOK_DELIVERY_TRANSITIONS as MOVES, type EndpointFulfillmentStep } from '../domain/statuses.js';
import { storedStep } from './fulfillment-steps.js';
import { statusMove, statusValue } from './guarded-sql.js';

/**
 * The webhooks' jobs (graphile-worker) and the statements that move a delivery. The trigger on
 * order_events (prisma/migrations/*_webhooks) adds FAN_OUT_TASK; the fan-out adds one SEND_TASK per
 * delivery, in the statement that creates the delivery, and a redelivery adds it in the statement
 * that resets the delivery: a delivery is PENDING exactly while a send job is owed.
 */
export const FAN_OUT_TASK = 'webhook_fan_out';
export const SEND_TASK = 'webhook_send';

/** The event a fulfilment step delivers to the endpoints with its role, instead of the fan-out. */
const PAID_EVENT: OrderEventType = 'order.paid';

export interface SendJobOptions {
  /** The job's attempts, the first included, before it is DEAD. */
  maxAttempts: number;
  /** Send jobs to one endpoint that may run at once: each lane is a graphile-worker queue, run one job at a time. */
  parallelPerEndpoint: number;
}

/**
 * `add_job` for the send of delivery `d`, on a queue of its endpoint's: an order's events always
 * take the same lane, so they usually arrive in order, and a slow endpoint holds at most its lanes.
 */
function addSendJob(d: string, options: SendJobOptions): Prisma.Sql {
  return Prisma.sql`graphile_worker.add_job(
      ${SEND_TASK},
      json_build_object('deliveryId', ${Prisma.raw(d)}.id),
      queue_name := 'webhook:' || ${Prisma.raw(d)}.endpoint_id || ':' || (abs(hashtext(${Prisma.raw(d)}.order_id::text)) % ${options.parallelPerEndpoint}::int),
      max_attempts := ${options.maxAttempts}::int,
      job_key := 'webhook_send:' || ${Prisma.raw(d)}.id)`;
}

/**
 * One delivery per enabled endpoint that hears of the event's type, and its send job, in one
 * statement: run again (the job retried after a crash), it finds the deliveries made and adds none.
 * An endpoint with a fulfilment role gets no `order.paid` here: its step delivers that one
 * (webhooks/fulfillment-services.ts). The trigger that queues this job holds the same rule.
 */
export function fanOut(eventId: string, options: SendJobOptions): Prisma.Sql {
  return Prisma.sql`
    WITH event AS (SELECT id, order_id, type FROM order_events WHERE id = ${eventId}::uuid),
    made AS (
      INSERT INTO webhook_deliveries (event_id, endpoint_id, status)
      SELECT event.id, e.id, ${statusValue('webhook_deliveries', 'PENDING')}
        FROM event JOIN webhook_endpoints e ON e.enabled AND event.type = ANY(e.event_types)
       WHERE NOT (event.type = ${PAID_EVENT} AND e.fulfillment_step IS NOT NULL)
      ON CONFLICT (event_id, endpoint_id) DO NOTHING
      RETURNING id, endpoint_id
    )
    SELECT count(*)::int AS deliveries
      FROM (SELECT made.id, made.endpoint_id, event.order_id FROM made, event) AS sends
      CROSS JOIN LATERAL ${addSendJob('sends', options)} AS job`;
}

/** What one attempt needs: the delivery, its endpoint (with its secrets) and its event. */
export interface DeliveryToSend {
  status: string;
  url: string;
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  eventId: string;
  type: string;
  seq: number;
  data: Record<string, unknown>;
  occurredAt: Date;
}

export function deliveryToSend(deliveryId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT d.status, e.url, e.enabled, e.secret, e.previous_secret AS "previousSecret",
           e.previous_secret_expires_at AS "previousSecretExpiresAt",
           ev.id AS "eventId", ev.type, ev.seq, ev.data, ev.occurred_at AS "occurredAt"
      FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN order_events ev ON ev.id = d.event_id
     WHERE d.id = ${deliveryId}::uuid`;
}

/** What an attempt came to: the endpoint's status code, or why there was none. */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
}

/** A 2xx: DELIVERED, the attempt counted. */
export function recordDelivered(deliveryId: string, outcome: AttemptOutcome): Prisma.Sql {
  const move = statusMove('webhook_deliveries', MOVES.deliver);
  return Prisma.sql`
    UPDATE webhook_deliveries SET ${move.set}, attempts = attempts + 1, last_status_code = ${outcome.statusCode}::int,
           last_error = NULL, last_attempt_at = now(), delivered_at = now()
     WHERE id = ${deliveryId}::uuid AND ${move.guard}`;
}

/** A failed attempt: still PENDING (another follows), or DEAD after the last. */
export function recordFailure(deliveryId: string, outcome: AttemptOutcome, last: boolean): Prisma.Sql {
  const move = statusMove('webhook_deliveries', last ? MOVES.kill : MOVES.attempt);
  return Prisma.sql`
    UPDATE webhook_deliveries SET ${move.set}, attempts = attempts + 1, last_status_code = ${outcome.statusCode}::int,
           last_error = ${outcome.error}, last_attempt_at = now(), dead_at = ${last ? Prisma.sql`now()` : Prisma.sql`NULL`}
     WHERE id = ${deliveryId}::uuid AND ${move.guard}`;
}

/**
 * An operator's redelivery of a DEAD (or DELIVERED) delivery: PENDING again with its attempts
 * reset, and a new send job, in one statement. No row: it does not exist, or it is PENDING already.
 */
export function redeliver(deliveryId: string, options: SendJobOptions): Prisma.Sql {
  const move = statusMove('webhook_deliveries', MOVES.redeliver);
  return Prisma.sql`
    WITH reset AS (
      UPDATE webhook_deliveries d SET ${move.set}, attempts = 0, last_status_code = NULL, last_error = NULL,
             delivered_at = NULL, dead_at = NULL
        FROM order_events ev
       WHERE d.id = ${deliveryId}::uuid AND ev.id = d.event_id AND d.${move.guard}
      RETURNING d.id, d.endpoint_id, ev.order_id
    )
    SELECT true AS enqueued FROM reset CROSS JOIN LATERAL ${addSendJob('reset', options)} AS job`;
}

/** An order's stored `order.paid`, as a fulfilment step delivers it (no row: the order was not paid). */
export function paidEventOf(orderId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT id AS "eventId", type, seq, data, occurred_at AS "occurredAt"
      FROM order_events WHERE order_id = ${orderId}::uuid AND type = ${PAID_EVENT}
     ORDER BY seq LIMIT 1`;
}

/** An endpoint that has a fulfilment role, with its secrets. */
export type RoleEndpoint = Pick<DeliveryToSend, 'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'> & {
  id: string;
};

/** The enabled endpoints that have the role of this step. */
export function roleEndpoints(step: EndpointFulfillmentStep): Prisma.Sql {
  return Prisma.sql`
    SELECT id, url, secret, previous_secret AS "previousSecret", previous_secret_expires_at AS "previousSecretExpiresAt"
      FROM webhook_endpoints WHERE enabled AND fulfillment_step = ${storedStep(step)}::"FulfillmentStep"
     ORDER BY created_at, id`;
}
