import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import type {
  CreatedPayment,
  EventsPage,
  EventsRequest,
  NewPayment,
  PaymentProvider,
  PaymentRef,
  ProviderClosing,
  ProviderPayment,
  RefundRequest,
} from '../ports/payment-provider.js';
import {
  callStripe,
  isAlreadyRefunded,
  isMissing,
  isServerError,
  isUnavailable,
  isUnexpectedState,
  providerFailure,
  rejection,
} from './failures.js';
import {
  CUSTOMER_ID_KEY,
  ORDER_ID_KEY,
  orderQuery,
  PAID_AT_EXPANSION,
  succeededPayment,
  toProviderPayment,
} from './intents.js';
import { READ_EVENT_TYPES, toProviderEvent } from './events.js';
import { findOwnRefund, REFUND_NOT_GIVEN, type OwnRefunds } from './refunds.js';

/** The payment's life on Stripe's PaymentIntents, one intent per order. */
export interface StripePaymentOptions {
  /** The payment method types offered (allowed_payment_method_types); unset: the Dashboard's (automatic_payment_methods). */
  paymentMethods?: string[] | undefined;
  /** AWAITING_FUNDS_MAX: a voucher expires within it, so its money never comes after the order let go. */
  awaitingFundsMaxMs?: number;
  /** STRIPE_CONNECT_ACCOUNT: the connected account the client acts on; unset: the platform's own. */
  connectAccount?: string | null;
}

/** The vouchers whose expiry an intent may set, each with the longest Stripe allows (days). */
const VOUCHER_MAX_DAYS = { konbini: 60, boleto: 60, oxxo: 7 } as const;
const DAY_MS = 86_400_000;
type IntentCreateParams = Stripe.PaymentIntentCreateParams;

export class StripePaymentProvider implements PaymentProvider {
  readonly cancelsPayments = true;

  constructor(
    private readonly stripe: Stripe,
    private readonly options: StripePaymentOptions = {},
  ) {}

  /** The account the client acts on (STRIPE_CONNECT_ACCOUNT), which the intents it reads were taken on. */
  private get connectAccount(): string | null {
    return this.options.connectAccount ?? null;
  }

  /**
   * Which methods the customer is offered, and the expiry of each voucher among them: whole days
   * from creation, a day short of AWAITING_FUNDS_MAX, since a voucher runs to the end of its last
   * day and is created before the deadline the hold counts from.
   */
  private methods(): Partial<IntentCreateParams> {
    const { paymentMethods, awaitingFundsMaxMs } = this.options;
    const offered: Partial<IntentCreateParams> = paymentMethods
      ? { allowed_payment_method_types: paymentMethods }
      : { automatic_payment_methods: { enabled: true } };
    if (awaitingFundsMaxMs === undefined) return offered;
    const days = Math.max(1, Math.floor(awaitingFundsMaxMs / DAY_MS) - 1);
    const vouchers = (Object.keys(VOUCHER_MAX_DAYS) as Array<keyof typeof VOUCHER_MAX_DAYS>).filter(
      (voucher) => !paymentMethods || paymentMethods.includes(voucher),
    );
    if (vouchers.length === 0) return offered;
    const options = Object.fromEntries(
      vouchers.map((voucher) => [voucher, { expires_after_days: Math.min(days, VOUCHER_MAX_DAYS[voucher]) }]),
    );
    return { ...offered, payment_method_options: options };
  }

  /**
   * Under the order's key, so that a repeat answers the first intent (within Stripe's 24 hours; an
   * order's payment window is shorter). After Stripe's server error, which that key would answer
   * for a day, once more under a key of its own: an intent the failed request may have made is
   * never kept on the order, so its client secret reaches nobody and it cannot be paid.
   */
  async createPayment(request: NewPayment): Promise<CreatedPayment> {
    const create = (idempotencyKey: string) =>
      this.stripe.paymentIntents.create(
        {
          amount: request.amountCents,
          currency: request.currency.toLowerCase(),
          metadata: { [ORDER_ID_KEY]: request.orderId, [CUSTOMER_ID_KEY]: request.customerId },
          ...this.methods(),
        },
        { idempotencyKey },
      );
    const key = `create-payment-${request.orderId}`;
    const intent = await callStripe('create a payment', () =>
      create(key).catch((err: unknown) => {
        if (!isServerError(err)) throw err;
        return create(`${key}-${randomUUID()}`);
      }),
    );
    if (!intent.client_secret) throw new Error(`Stripe created payment ${intent.id} without a client secret`);
    return { paymentId: intent.id, clientSecret: intent.client_secret };
  }

  /**
   * Reads the intent first and cancels it only while nothing is under way (or a customer's action,
   * when asked to: Stripe cancels `requires_action`); if it moved on in the meantime (Stripe refuses
   * with `payment_intent_unexpected_state`), reads it again and answers what it became. By order,
   * every intent of the order: one that succeeded wins, then money on its way, then a customer acting.
   */
  async cancelPayment(request: PaymentRef, options: { duringCustomerAction?: boolean } = {}): Promise<ProviderClosing> {
    try {
      return await this.cancelEach(request, options.duringCustomerAction ?? false);
    } catch (err) {
      if (isUnavailable(err)) return { outcome: 'UNAVAILABLE' };
      throw providerFailure(err, 'cancel a payment');
    }
  }

  /**
   * Stripe forgets an idempotency key after about 24 hours, and a refund can be retried later than
   * that (an operator's retry): so the payment's refunds are read first, and one this service made
   * that has not failed is the answer. A key per failed attempt lets an operator's retry be a new refund.
   * After Stripe's server error, which that key would answer for a day, the refunds are read again
   * (the failed request may have made one) and a new one is asked under a key of its own. Stripe's
   * refusal of a payment already refunded reads them again too: a refund made meanwhile by an
   * attempt given up on (still running past its timeout) is this one, not a refusal.
   */
  async refund({ paymentId, amountCents }: RefundRequest): Promise<{ refundRef: string }> {
    const ownRefunds = async () =>
      findOwnRefund((await this.stripe.refunds.list({ payment_intent: paymentId, limit: 100 })).data, paymentId);
    const create = ({ idempotencyKey, metadata }: ReturnType<OwnRefunds['key']>) =>
      this.stripe.refunds.create({ payment_intent: paymentId, amount: amountCents, metadata }, { idempotencyKey });
    return callStripe('refund a payment (list its refunds, or make one)', async () => {
      let own = await ownRefunds();
      if (own.live) return { refundRef: own.live.id };
      let refund: Stripe.Refund;
      try {
        refund = await create(own.key());
      } catch (err) {
        if (!isServerError(err) && !isAlreadyRefunded(err)) throw err;
        // The failed request, or an attempt given up on that is still running, may have made one.
        own = await ownRefunds();
        if (own.live) return { refundRef: own.live.id };
        if (!isServerError(err)) throw err;
        refund = await create(own.key(randomUUID()));
      }
      if (REFUND_NOT_GIVEN.has(refund.status))
        throw rejection(`Stripe refused to refund payment ${paymentId}: refund ${refund.id} is ${refund.status}`);
      return { refundRef: refund.id };
    });
  }

  /**
   * Stripe's events of the types the webhook reads that it has not delivered (`delivery_success:
   * false`: still pending, or given up on at some endpoint), newest first as Stripe lists them.
   * Stripe keeps events for 30 days.
   */
  async listEvents({ createdSince, startingAfter, limit }: EventsRequest): Promise<EventsPage> {
    const page = await callStripe('list its events', () =>
      this.stripe.events.list({
        created: { gte: Math.floor(Date.parse(createdSince) / 1000) },
        types: [...READ_EVENT_TYPES],
        delivery_success: false,
        limit,
        ...(startingAfter === undefined ? {} : { starting_after: startingAfter }),
      }),
    );
    return {
      events: page.data.map((event) => ({
        eventId: event.id,
        createdAt: new Date(event.created * 1000).toISOString(),
        event: toProviderEvent(event),
      })),
      hasMore: page.has_more,
    };
  }

  /** Newest first, as Stripe lists them; none: no intent has that id, or none was made for the order. */
  private async intentsOf(request: PaymentRef): Promise<ProviderPayment[]> {
    if ('paymentId' in request) {
      try {
        return [toProviderPayment(await this.retrieve(request.paymentId), this.connectAccount)];
      } catch (err) {
        if (isMissing(err)) return [];
        throw err;
      }
    }
    // Stripe's search lags writes by up to a minute: by order is for an intent made well before.
    const found = await this.stripe.paymentIntents.search({
      query: orderQuery(request.orderId),
      expand: [`data.${PAID_AT_EXPANSION}`],
    });
    return found.data.map((intent) => toProviderPayment(intent, this.connectAccount));
  }

  private async cancelEach(request: PaymentRef, duringCustomerAction: boolean): Promise<ProviderClosing> {
    const intents = await this.intentsOf(request);
    // A payment id is one this service was given: Stripe not knowing it is a refusal, not "nothing to cancel".
    if ('paymentId' in request && intents.length === 0)
      throw rejection(`Stripe has no payment ${request.paymentId} to cancel`);
    const outcomes = await Promise.all(intents.map((intent) => this.cancelIntent(intent, duringCustomerAction)));
    return (
      outcomes.find((o) => o.outcome === 'PAID_AT_PROVIDER') ??
      outcomes.find((o) => o.outcome === 'FUNDS_IN_TRANSIT') ??
      outcomes.find((o) => o.outcome === 'CUSTOMER_ACTION') ?? { outcome: 'CLOSED' }
    );
  }

  private async cancelIntent(payment: ProviderPayment, duringCustomerAction: boolean): Promise<ProviderClosing> {
    const cancellable = (p: ProviderPayment) =>
      p.status === 'OPEN' || (duringCustomerAction && p.status === 'CUSTOMER_ACTION');
    if (cancellable(payment)) {
      try {
        await this.stripe.paymentIntents.cancel(payment.paymentId, { cancellation_reason: 'abandoned' });
        return { outcome: 'CLOSED' };
      } catch (err) {
        if (!isUnexpectedState(err)) throw err;
        payment = toProviderPayment(await this.retrieve(payment.paymentId), this.connectAccount);
        if (cancellable(payment)) throw err;
      }
    }
    switch (payment.status) {
      case 'SUCCEEDED':
        return { outcome: 'PAID_AT_PROVIDER', payment: succeededPayment(payment) };
      case 'CUSTOMER_ACTION':
      case 'FUNDS_IN_TRANSIT':
        return { outcome: payment.status };
      default:
        return { outcome: 'CLOSED' };
    }
  }

  private retrieve(paymentId: string): Promise<Stripe.PaymentIntent> {
    return this.stripe.paymentIntents.retrieve(paymentId, { expand: [PAID_AT_EXPANSION] });
  }
}
