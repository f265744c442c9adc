import { randomBytes } from 'node:crypto';
import { intentJson } from './wire.js';

/**
 * One Stripe account's PaymentIntents, charges and refunds, kept in memory and moved the way
 * Stripe moves them: what a customer, a bank or Stripe does on its own side is a method here
 * (succeed, startProcessing, requireAction, failRefund), called by the test that plays that part.
 */

export type IntentStatus = 'requires_payment_method' | 'requires_action' | 'processing' | 'succeeded' | 'canceled';

export interface FakeIntent {
  id: string;
  amount: number;
  amountReceived: number;
  currency: string;
  status: IntentStatus;
  metadata: Record<string, string>;
  clientSecret: string;
  created: number;
  chargeId: string | null;
  canceledAt: number | null;
  cancellationReason: string | null;
  /** While requires_action: what the customer is asked to do (Stripe's next_action.type). */
  nextAction: string | null;
}

export interface FakeCharge {
  id: string;
  paymentIntent: string;
  amount: number;
  currency: string;
  created: number;
}

export interface FakeRefund {
  id: string;
  /** null: a refund of a charge made without a payment intent (never one of the service's). */
  paymentIntent: string | null;
  charge: string;
  amount: number;
  currency: string;
  status: 'succeeded' | 'pending' | 'failed' | 'canceled';
  /** Why a failed refund failed, in Stripe's words. */
  failureReason?: string;
  metadata: Record<string, string>;
  created: number;
}

/** A refusal in Stripe's terms: the HTTP status and the `error` object of its answer. */
export class StripeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: { type: string; code?: string; param?: string; payment_intent?: object },
    message: string,
  ) {
    super(message);
  }
}

const CANCELLABLE: ReadonlySet<IntentStatus> = new Set(['requires_payment_method', 'requires_action']);

const id = (prefix: string) => `${prefix}_fake${randomBytes(8).toString('hex')}`;
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** What the wire format reads of an account. */
export type FakeAccountState = Pick<FakeStripeAccount, 'charges'>;

export class FakeStripeAccount {
  readonly intents = new Map<string, FakeIntent>();
  readonly charges = new Map<string, FakeCharge>();
  readonly refunds = new Map<string, FakeRefund>();

  createIntent(input: { amount: number; currency: string; metadata: Record<string, string> }): FakeIntent {
    if (!Number.isInteger(input.amount) || input.amount < 1)
      throw invalid('parameter_invalid_integer', 'amount', 'Invalid integer: amount');
    const intentId = id('pi');
    const intent: FakeIntent = {
      id: intentId,
      amount: input.amount,
      amountReceived: 0,
      currency: input.currency,
      status: 'requires_payment_method',
      metadata: input.metadata,
      clientSecret: `${intentId}_secret_${randomBytes(12).toString('hex')}`,
      created: seconds(new Date()),
      chargeId: null,
      canceledAt: null,
      cancellationReason: null,
      nextAction: null,
    };
    this.intents.set(intent.id, intent);
    return intent;
  }

  intent(intentId: string): FakeIntent {
    const intent = this.intents.get(intentId);
    if (!intent)
      throw new StripeRefusal(
        404,
        { type: 'invalid_request_error', code: 'resource_missing', param: 'intent' },
        `No such payment_intent: '${intentId}'`,
      );
    return intent;
  }

  cancelIntent(intentId: string, reason: string | undefined): FakeIntent {
    const intent = this.intent(intentId);
    if (!CANCELLABLE.has(intent.status)) {
      throw new StripeRefusal(
        400,
        {
          type: 'invalid_request_error',
          code: 'payment_intent_unexpected_state',
          payment_intent: intentJson(this, intent),
        },
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`,
      );
    }
    Object.assign(intent, {
      status: 'canceled',
      nextAction: null,
      canceledAt: seconds(new Date()),
      cancellationReason: reason ?? null,
    });
    return intent;
  }

  /** The customer paid (card, 3-D Secure passed, or the bank confirmed): the charge is made at `at`. */
  succeed(intentId: string, at = new Date()): FakeIntent {
    const intent = this.intent(intentId);
    if (intent.status === 'canceled' || intent.status === 'succeeded')
      throw new Error(`${intentId} is ${intent.status}`);
    const charge: FakeCharge = {
      id: id('ch'),
      paymentIntent: intent.id,
      amount: intent.amount,
      currency: intent.currency,
      created: seconds(at),
    };
    this.charges.set(charge.id, charge);
    return Object.assign(intent, {
      status: 'succeeded',
      nextAction: null,
      amountReceived: intent.amount,
      chargeId: charge.id,
    });
  }

  /** A bank debit submitted: the intent waits for the bank. */
  startProcessing(intentId: string): FakeIntent {
    return Object.assign(this.intent(intentId), { status: 'processing', nextAction: null });
  }

  /**
   * The customer is asked to act: a 3-D Secure challenge (`use_stripe_sdk`, the default), a
   * redirect, or a voucher or transfer to pay (`konbini_display_details`, …).
   */
  requireAction(intentId: string, nextAction = 'use_stripe_sdk'): FakeIntent {
    return Object.assign(this.intent(intentId), { status: 'requires_action', nextAction });
  }

  /** The bank refused the debit (`payment_intent.payment_failed`): the intent needs a payment method again. */
  failPayment(intentId: string): FakeIntent {
    return Object.assign(this.intent(intentId), { status: 'requires_payment_method', nextAction: null });
  }

  /** Metadata search of the one form the adapter uses: `metadata['key']:'value'`. */
  searchIntents(query: string): FakeIntent[] {
    const match = /^metadata\['(\w+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(query);
    if (!match)
      throw invalid(
        'search_query_invalid',
        'query',
        `The fake understands only metadata['key']:'value', not: ${query}`,
      );
    const [, key, quoted] = match;
    const value = quoted!.replace(/\\(.)/g, '$1');
    return [...this.intents.values()].filter((i) => i.metadata[key!] === value).reverse();
  }

  createRefund(input: {
    paymentIntent: string;
    amount: number | undefined;
    metadata: Record<string, string>;
  }): FakeRefund {
    const intent = this.intents.get(input.paymentIntent);
    if (!intent)
      throw invalid('resource_missing', 'payment_intent', `No such payment_intent: '${input.paymentIntent}'`);
    if (intent.status !== 'succeeded' || intent.chargeId === null)
      throw invalid(
        'charge_not_refundable',
        'payment_intent',
        `PaymentIntent ${intent.id} has no successful charge to refund.`,
      );
    const given = this.refundsOf(intent.id)
      .filter((r) => r.status !== 'failed' && r.status !== 'canceled')
      .reduce((sum, r) => sum + r.amount, 0);
    const amount = input.amount ?? intent.amountReceived - given;
    if (given >= intent.amountReceived)
      throw invalid('charge_already_refunded', undefined, `Charge ${intent.chargeId} has already been refunded.`);
    if (amount > intent.amountReceived - given)
      throw invalid('amount_too_large', 'amount', 'Refund amount is greater than unrefunded amount on charge');
    const refund: FakeRefund = {
      id: id('re'),
      paymentIntent: intent.id,
      charge: intent.chargeId,
      amount,
      currency: intent.currency,
      status: 'succeeded',
      metadata: input.metadata,
      created: seconds(new Date()),
    };
    this.refunds.set(refund.id, refund);
    return refund;
  }

  /** Newest first, as Stripe lists them. */
  refundsOf(intentId: string): FakeRefund[] {
    return [...this.refunds.values()].filter((r) => r.paymentIntent === intentId).reverse();
  }

  /** The card issuer turned the refund down after Stripe accepted it (Stripe sends `refund.failed`). */
  failRefund(refundId: string, reason = 'expired_or_canceled_card'): FakeRefund {
    const refund = this.refunds.get(refundId);
    if (!refund) throw new Error(`no refund ${refundId}`);
    refund.status = 'failed';
    refund.failureReason = reason;
    return refund;
  }
}

function invalid(code: string, param: string | undefined, message: string): StripeRefusal {
  return new StripeRefusal(400, { type: 'invalid_request_error', code, ...(param && { param }) }, message);
}
