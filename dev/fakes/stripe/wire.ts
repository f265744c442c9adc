import type { FakeAccountState, FakeCharge, FakeIntent, FakeRefund } from './account.js';

/**
 * The objects as Stripe's API writes them (snake_case, times in seconds), with the fields the
 * official client and this service read; `expand` replaces an id with its object, as Stripe does.
 */

export function intentJson(account: FakeAccountState, intent: FakeIntent, expand: readonly string[] = []): object {
  const charge = intent.chargeId === null ? null : account.charges.get(intent.chargeId)!;
  return {
    id: intent.id,
    object: 'payment_intent',
    amount: intent.amount,
    amount_received: intent.amountReceived,
    automatic_payment_methods: { enabled: true },
    canceled_at: intent.canceledAt,
    cancellation_reason: intent.cancellationReason,
    capture_method: 'automatic',
    client_secret: intent.clientSecret,
    created: intent.created,
    currency: intent.currency,
    latest_charge: charge && expand.includes('latest_charge') ? chargeJson(charge) : (charge?.id ?? null),
    livemode: false,
    metadata: intent.metadata,
    next_action: intent.nextAction === null ? null : { type: intent.nextAction },
    status: intent.status,
  };
}

function chargeJson(charge: FakeCharge): object {
  return {
    id: charge.id,
    object: 'charge',
    amount: charge.amount,
    captured: true,
    created: charge.created,
    currency: charge.currency,
    paid: true,
    payment_intent: charge.paymentIntent,
    status: 'succeeded',
  };
}

export function refundJson(refund: FakeRefund): object {
  return {
    id: refund.id,
    object: 'refund',
    amount: refund.amount,
    charge: refund.charge,
    created: refund.created,
    currency: refund.currency,
    metadata: refund.metadata,
    payment_intent: refund.paymentIntent,
    status: refund.status,
    ...(refund.failureReason !== undefined && { failure_reason: refund.failureReason }),
  };
}

export function listJson(url: string, data: readonly object[]): object {
  return { object: 'list', data, has_more: false, url };
}

export function searchJson(url: string, data: readonly object[]): object {
  return { object: 'search_result', data, has_more: false, next_page: null, url };
}
