import type { AttemptOutcome, DeliveryToSend } from '../store/webhook-deliveries.js';
import { signedHeaders } from './signing.js';

/** An endpoint's address and secrets, and the stored event it is sent. */
export type EventPost = Pick<
  DeliveryToSend,
  'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'eventId' | 'type' | 'seq' | 'data' | 'occurredAt'
>;

/**
 * One signed POST of the event (the body Standard Webhooks describes: type, timestamp, data), the
 * same for the queue's deliveries and a fulfilment step's: `webhook-id` is the event's id, so a
 * receiver drops a copy it already has.
 */
export async function postEvent(delivery: EventPost, timeoutMs: number): Promise<AttemptOutcome> {
  const body = JSON.stringify({
    type: delivery.type,
    timestamp: delivery.occurredAt.toISOString(),
    data: { ...delivery.data, seq: delivery.seq },
  });
  const secrets = [delivery.secret];
  if (delivery.previousSecret && delivery.previousSecretExpiresAt && delivery.previousSecretExpiresAt > new Date())
    secrets.push(delivery.previousSecret);
  try {
    const response = await fetch(delivery.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedHeaders(secrets, delivery.eventId, new Date(), body) },
      body,
      // A redirect is an answer that is not 2xx: following it would post the event somewhere else.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return {
      statusCode: response.status,
      error: response.ok ? null : `the endpoint answered ${response.status}`,
    };
  } catch (err) {
    return { statusCode: null, error: describeFailure(err, timeoutMs) };
  }
}

/** Why no answer came, in words that name no secret (fetch's errors carry only the cause). */
function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof DOMException && err.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return `no answer: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
}
