import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import type { InvoiceService, LoyaltyService } from '../adapters/ports/fulfillment-services.js';
import { THIRD_PARTY_FAILURES } from '../domain/errors.js';
import type { EndpointFulfillmentStep } from '../domain/statuses.js';
import type { Logger } from '../lib/logger.js';
import { query } from '../lib/sql.js';
import { paidEventOf, roleEndpoints, type DeliveryToSend, type RoleEndpoint } from '../store/webhook-deliveries.js';
import { postEvent, type EventPost } from './send.js';

/**
 * Invoicing and loyalty as the shop's own systems (docs/operations.md, "Webhooks"): the step
 * delivers the order's stored `order.paid`, signed as every webhook is, to each enabled endpoint
 * that has the step's role, while the activity waits. The receiver reads what to invoice or credit
 * from the event (`amountCents`); the step's idempotency key is the event's id, sent as `webhook-id`.
 */
export interface WebhookFulfillmentDeps {
  pool: pg.Pool;
  /** How long each endpoint has to answer (WEBHOOK_TIMEOUT). */
  timeoutMs: number;
  logger: Logger;
}

export interface WebhookFulfillmentServices {
  invoices: InvoiceService;
  loyalty: LoyaltyService;
}

export function createWebhookFulfillmentServices(deps: WebhookFulfillmentDeps): WebhookFulfillmentServices {
  const invoice = createRoleDelivery(deps, 'invoice');
  const loyalty = createRoleDelivery(deps, 'loyalty');
  return {
    invoices: { issue: ({ orderId }) => invoice(orderId) },
    loyalty: { award: ({ orderId }) => loyalty(orderId) },
  };
}

const SYSTEM_NAMES: Record<EndpointFulfillmentStep, string> = {
  invoice: 'invoicing system',
  loyalty: 'loyalty system',
};

/** What one endpoint's answer means for the step. */
type Answer = 'taken' | 'rejected' | 'unavailable';

/**
 * 2xx: taken. 408 and 429 (come back later) and 5xx: unavailable, as is no answer at all. Any
 * other answer (a 4xx, a redirect) will not change on its own: rejected, for an operator.
 */
function answerOf(statusCode: number | null): Answer {
  if (statusCode === null || statusCode >= 500 || statusCode === 408 || statusCode === 429) return 'unavailable';
  return statusCode >= 200 && statusCode < 300 ? 'taken' : 'rejected';
}

/**
 * The step is done once every endpoint with the role has taken the event; a retry sends it to all
 * of them again (each drops a copy by its `webhook-id`). Without such an endpoint there is no one
 * to tell: the step is done, and the worker says so once (again after an endpoint came and went).
 */
function createRoleDelivery(deps: WebhookFulfillmentDeps, step: EndpointFulfillmentStep) {
  const system = SYSTEM_NAMES[step];
  let saidNoneRegistered = false;
  return async (orderId: string): Promise<void> => {
    const endpoints = (await query<RoleEndpoint>(deps.pool, roleEndpoints(step))).rows;
    if (endpoints.length === 0) {
      if (!saidNoneRegistered) deps.logger.warn({ step }, `no ${system} registered: the ${step} step sends nothing`);
      saidNoneRegistered = true;
      return;
    }
    saidNoneRegistered = false;
    const event = (await query<PaidEvent>(deps.pool, paidEventOf(orderId))).rows[0];
    // order.paid is written with the payment that starts fulfilment: without it, ours is the fault.
    if (!event) throw new Error(`${step}: order ${orderId} has no order.paid event`);
    const outcomes = await Promise.all(
      endpoints.map(async (endpoint) => {
        const post: EventPost = { ...endpoint, ...event };
        const outcome = await postEvent(post, deps.timeoutMs);
        return { endpointId: endpoint.id, answer: answerOf(outcome.statusCode), ...outcome };
      }),
    );
    const failures = outcomes.filter((o) => o.answer !== 'taken');
    if (failures.length === 0) return;
    const message = `the ${system} did not take order.paid: ${failures
      .map((f) => `endpoint ${f.endpointId}: ${f.error ?? 'failed'}`)
      .join('; ')}`;
    deps.logger.warn({ step, orderId, eventId: event.eventId, failures }, message);
    throw failures.some((f) => f.answer === 'rejected')
      ? ApplicationFailure.nonRetryable(message, THIRD_PARTY_FAILURES.rejected)
      : ApplicationFailure.retryable(message, THIRD_PARTY_FAILURES.unavailable);
  };
}

type PaidEvent = Pick<DeliveryToSend, 'eventId' | 'type' | 'seq' | 'data' | 'occurredAt'>;
