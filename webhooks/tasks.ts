import type { JobHelpers, TaskList } from 'graphile-worker';
import type { Counter } from 'prom-client';
import type { WebhookSettings } from '../lib/config/webhooks.js';
import type { Logger } from '../lib/logger.js';
import { query } from '../lib/sql.js';
import {
  deliveryToSend,
  fanOut,
  FAN_OUT_TASK,
  recordDelivered,
  recordFailure,
  SEND_TASK,
  type AttemptOutcome,
  type DeliveryToSend,
} from '../store/webhook-deliveries.js';
import { postEvent } from './send.js';

export interface WebhookTaskDeps {
  settings: Pick<WebhookSettings, 'maxAttempts' | 'timeoutMs' | 'parallelPerEndpoint'>;
  logger: Logger;
  /** Deliveries that became DEAD, by event type. */
  deadDeliveries: Counter<'type'>;
}

/**
 * The graphile-worker tasks that deliver order events: the fan-out (one delivery and send job per
 * endpoint that hears of the event) and the send (one signed POST). A send that fails throws, and
 * graphile-worker runs it again after its backoff; the last attempt does not throw but makes the
 * delivery DEAD, so the job ends and the dead letter is the delivery row, for an operator.
 */
export function createWebhookTasks(deps: WebhookTaskDeps): TaskList {
  return {
    async [FAN_OUT_TASK](payload, helpers) {
      const { eventId } = payload as { eventId: string };
      await helpers.withPgClient((client) => query(client, fanOut(eventId, deps.settings)));
    },
    async [SEND_TASK](payload, helpers) {
      const { deliveryId } = payload as { deliveryId: string };
      const { rows } = await helpers.withPgClient((client) =>
        query<DeliveryToSend>(client, deliveryToSend(deliveryId)),
      );
      const delivery = rows[0];
      // Gone (its endpoint deleted) or no longer PENDING (a redelivery's job ran first): nothing is owed.
      if (!delivery || delivery.status !== 'PENDING') return;
      const outcome = delivery.enabled
        ? await postEvent(delivery, deps.settings.timeoutMs)
        : { statusCode: null, error: 'the endpoint is disabled' };
      if (outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300) {
        await helpers.withPgClient((client) => query(client, recordDelivered(deliveryId, outcome)));
        return;
      }
      await failed(deliveryId, delivery, outcome, helpers, deps);
    },
  };
}

async function failed(
  deliveryId: string,
  delivery: DeliveryToSend,
  outcome: AttemptOutcome,
  helpers: JobHelpers,
  deps: WebhookTaskDeps,
): Promise<void> {
  // graphile-worker counts the attempt when it takes the job: this one is attempts of max_attempts.
  const last = helpers.job.attempts >= helpers.job.max_attempts;
  const { rowCount } = await helpers.withPgClient((client) => query(client, recordFailure(deliveryId, outcome, last)));
  if (rowCount === 0) return; // no longer PENDING (deleted with its endpoint): nothing is owed
  // Thrown, graphile-worker runs the job again after its backoff (and logs the message).
  if (!last) throw new Error(`webhook delivery ${deliveryId}: ${outcome.error ?? 'failed'}`);
  deps.deadDeliveries.inc({ type: delivery.type });
  deps.logger.warn(
    { deliveryId, eventId: delivery.eventId, type: delivery.type, attempts: helpers.job.attempts, ...outcome },
    'webhook delivery is DEAD after its last attempt',
  );
}
