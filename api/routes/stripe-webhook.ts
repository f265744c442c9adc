import { acceptProviderEvent } from '../../handover/provider-events.js';
import type { ApiHandler } from '../endpoint-table.js';
import type { PaymentDeps } from './payments.js';

/**
 * Stripe's webhook; the SDK checked the signature on the raw body and read the event (api/auth.ts).
 * What the event does is the webhook's own path (handover/provider-events.ts), which the provider
 * sweep feeds too. Every event it reads or ignores answers 200: Stripe redelivers anything else for
 * days, and no redelivery could change how an event of another type is read; money for no order of
 * ours is recorded as unclaimed (UNCLAIMED_RECORDED) and refunded after a grace. Only a failed
 * hand-over is a 5xx, so that Stripe tries again.
 */
export const acceptStripeEvent: ApiHandler<'acceptStripeEvent', PaymentDeps> = async (
  { body, caller: { event } },
  deps,
) => {
  if (event === undefined) {
    deps.logger.info({ eventId: body.id, eventType: body.type }, 'Stripe event ignored: no payment to hand over');
    return { eventId: body.id, outcome: 'IGNORED' };
  }
  return { eventId: event.eventId, outcome: await acceptProviderEvent(deps, event) };
};
