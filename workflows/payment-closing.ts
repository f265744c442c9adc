import { CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import ms from 'ms';
import type { ClosingOutcome } from '../activities/provider-payments.js';
import type { WaitingFor } from '../domain/search-attributes.js';
import type { CancelReason } from '../domain/statuses.js';
import { money } from './activity-proxies.js';
import { STUCK_AFTER } from './activity-options.js';
import { Backoff, PROVIDER_BACKOFF, type BackoffRule } from './backoff.js';
import { failureKind, rootCauseMessage } from './failures.js';
import type { OrderRun } from './order-run.js';

/**
 * Money on its way is decided by the provider's event; this recheck only covers an event that was
 * lost: an hour, then twice as long each time, up to a day (about 18 asks in 14 days).
 */
const FUNDS_RECHECK: BackoffRule = { first: '1 hour', cap: '1 day' };
/** A customer's action the provider reports past its grace (it moved on as the grace ended) is asked about again this soon. */
const ACTION_RECHECK_MS = ms('1 minute');
/** How long an order waits for a silent provider before an operator is asked to look (as for a stuck call). */
const SILENT_PROVIDER_ALERT_MS = ms(STUCK_AFTER);
/** The closing's item among the run's attention items and its waits. */
const CLOSING_KEY = 'provider:closing';
/** The wait for money on its way, and its one flag once AWAITING_FUNDS_MAX is over. */
const FUNDS_KEY = 'provider:funds';

/** What closing the payment came to: closed, so the guarded cancel may run; or the order decided without it. */
export type Closing =
  /**
   * The guarded cancel may run, for `reason` when the payment itself decided it (its funds failed).
   * `leftOpen`: the provider has not closed the payment (an operator forced the cancel, or the funds
   * outlasted AWAITING_FUNDS_MAX): the run keeps closing it after the cancel (closeAfterCancel).
   */
  | { outcome: 'CLOSED'; reason?: CancelReason; leftOpen?: boolean }
  /** A payment paid the order: the provider's, or a webhook's that came meanwhile. */
  | { outcome: 'PAID' }
  /** The provider was not asked: the closing activity found the order not due, or decided. */
  | Extract<ClosingOutcome, { outcome: 'NOT_DUE' | 'ALREADY_FINAL' }>;

/**
 * Provider first: at the deadline (or the customer's cancel) the payment is closed at the provider
 * before the order lets go of its stock and coupon, because only the provider knows whether the
 * customer is paying right now. Its answer decides:
 * - cancelled: the order may be cancelled; if it was awaiting funds, they failed (PAYMENT_FAILED);
 * - already succeeded: the provider's payment is recorded and settled like a webhook's, so it pays the
 *   order however late its webhook comes;
 * - a customer's action (3-D Secure, a redirect): it has until PAYMENT_ACTION_GRACE after the
 *   deadline, then the provider is asked again and cancels it;
 * - funds on their way (a debit, a voucher, a transfer): the order is AWAITING_FUNDS, keeps its stock
 *   and coupon, and waits for the provider's event; a sparse recheck covers a lost event, and at
 *   AWAITING_FUNDS_MAX the hold ends: the order is cancelled, with one flag for an operator;
 * - unavailable: nothing is known, so nothing is released. Asked again with PROVIDER_BACKOFF
 *   (workflows/backoff.ts), so a provider down for days costs 6 rounds an hour; after
 *   STUCK_AFTER the order is flagged NeedsAttention, and an operator may force the cancel.
 * A payment that arrives through the webhook meanwhile ends the wait at once, and so does the
 * provider's word that it failed (paymentFailed): the provider is then asked at once. A closing
 * that lasts continues as new between two questions (workflows/continue-as-new.ts), and the next
 * run goes on with it from the same start.
 */
export async function closePaymentFirst(run: OrderRun, reason: CancelReason): Promise<Closing> {
  run.enter('closing-payment');
  const since = run.closing?.since ?? Date.now();
  run.closing = { reason, since };
  const backoff = new Backoff(PROVIDER_BACKOFF);
  const fundsRecheck = new Backoff(FUNDS_RECHECK);
  for (let tries = 1; ; tries++) {
    if (run.forceCancelRequested) {
      log.warn('cancel forced by an operator without the provider closing the payment', { orderId: run.orderId });
      return done(run, { outcome: 'CLOSED', leftOpen: true });
    }
    await run.continueAsNewIfDue();
    run.recheckRequested = false;
    const answer = await closeAtProvider(run, reason);
    let waitMs: number;
    switch (answer.outcome) {
      case 'CLOSED':
      case 'NOT_CANCELLABLE':
        // Money that was on its way and is now closed never came: the payment failed.
        return done(
          run,
          run.status === 'AWAITING_FUNDS' ? { outcome: 'CLOSED', reason: 'PAYMENT_FAILED' } : { outcome: 'CLOSED' },
        );
      case 'NOT_DUE':
      case 'ALREADY_FINAL':
        return done(run, answer);
      case 'PAID_AT_PROVIDER':
        await run.payments.settle({ paymentId: answer.paymentId, orderId: run.orderId });
        // Its webhook may be settling the same payment in another handler: wait for that one too.
        await condition(() => run.payments.idle);
        // A payment that did not pay the order (a wrong amount) was refunded; it was the order's
        // payment at the provider, so nothing else can pay the order now.
        return done(run, run.status === 'PAID' ? { outcome: 'PAID' } : { outcome: 'CLOSED' });
      case 'CUSTOMER_ACTION':
        waitMs = Math.max(Date.parse(answer.graceEndsAt) - Date.now(), ACTION_RECHECK_MS);
        heldBy(run, 'PROVIDER_CLOSING', `customer action under way, grace until ${answer.graceEndsAt}`, since, tries);
        break;
      case 'FUNDS_IN_TRANSIT': {
        const leftMs = Date.parse(answer.holdEndsAt) - Date.now();
        if (leftMs <= 0) {
          flagFundsOutlasted(run, answer.holdEndsAt);
          return done(run, { outcome: 'CLOSED', leftOpen: true });
        }
        // Once per run: an adopting run finds the order AWAITING_FUNDS already, and shows it too.
        if (run.holdEndsAt === null) run.awaitFunds(answer.holdEndsAt);
        waitMs = Math.min(fundsRecheck.next(), leftMs);
        heldBy(run, 'FUNDS', `money on its way, held until ${answer.holdEndsAt}`, since, tries);
        break;
      }
      case 'UNAVAILABLE':
        waitMs = backoff.next();
        if (Date.now() - since >= SILENT_PROVIDER_ALERT_MS) flagSilentProvider(run, since);
        heldBy(run, 'PROVIDER_CLOSING', 'unavailable', since, tries);
        break;
      case 'REFUSED':
        waitMs = backoff.next();
        run.attention.note(
          CLOSING_KEY,
          `the payment provider refused to close the payment (${answer.error}): the order is held; check the payment ` +
            `at the provider, then ${forceCancelHint(run)}`,
        );
        // Refused for good: asking again changes nothing, an operator has to look.
        heldBy(run, 'OPERATOR', `refused (${answer.error})`, since, tries);
        break;
    }
    // A webhook's payment, the provider's word that it failed, or an operator's force-cancel ends the wait early.
    await condition(() => !run.open || run.forceCancelRequested || run.recheckRequested, waitMs);
    if (run.status === 'PAID') return done(run, { outcome: 'PAID' });
  }
}

/**
 * After a cancel the provider did not close (forced, or funds that outlasted their hold): the
 * payment is closed at the provider all the same, asked again with a backoff until it answers,
 * so that nobody pays a cancelled order; one it took meanwhile is settled (refunded, as a late
 * payment). Money still on its way is asked about as rarely as while the order awaited it.
 */
export async function closeAfterCancel(run: OrderRun): Promise<void> {
  run.enter('closing-payment');
  // Since the cancel, or since the previous run's cancel when this one continues it.
  run.closingAfterCancel ??= { since: Date.now() };
  const { since } = run.closingAfterCancel;
  const backoff = new Backoff(PROVIDER_BACKOFF);
  const fundsRecheck = new Backoff(FUNDS_RECHECK);
  for (let tries = 1; ; tries++) {
    await run.continueAsNewIfDue();
    run.recheckRequested = false;
    const answer = await run.keepTrying.mustSucceed(money, 'closeCancelledPayment', run.orderId);
    let waitMs: number;
    switch (answer.outcome) {
      case 'CLOSED':
        break;
      case 'PAID_AT_PROVIDER':
        await run.payments.settle({ paymentId: answer.paymentId, orderId: run.orderId });
        await condition(() => run.payments.idle);
        break;
      case 'CUSTOMER_ACTION':
        waitMs = ACTION_RECHECK_MS;
        break;
      case 'FUNDS_IN_TRANSIT':
        waitMs = fundsRecheck.next();
        break;
      case 'UNAVAILABLE':
        waitMs = backoff.next();
        break;
    }
    if (answer.outcome === 'CLOSED' || answer.outcome === 'PAID_AT_PROVIDER') {
      run.closingAfterCancel = undefined;
      run.attention.note(FUNDS_KEY, null);
      run.waits.note(CLOSING_KEY, null);
      return;
    }
    heldBy(run, 'PROVIDER_CLOSING', `the order is cancelled; ${HELD_WORDS[answer.outcome]}`, since, tries);
    // The provider's word that the payment failed: asked again at once.
    await condition(() => run.recheckRequested, waitMs!);
  }
}

/** The provider's answers that hold a closing, in the words the Web UI's details use. */
const HELD_WORDS = {
  CUSTOMER_ACTION: 'customer action under way',
  FUNDS_IN_TRANSIT: 'money on its way',
  UNAVAILABLE: 'unavailable',
} as const;

/**
 * The closing's answer from the provider, or REFUSED when the provider rejected the cancel for good (a
 * payment it does not know): nothing is known then either, so the order is held for an operator.
 */
async function closeAtProvider(
  run: OrderRun,
  reason: CancelReason,
): Promise<ClosingOutcome | { outcome: 'REFUSED'; error: string }> {
  try {
    return await run.keepTrying.mustSucceed(money, 'closePayment', { orderId: run.orderId, reason });
  } catch (err) {
    if (failureKind(err) !== 'refused') throw err;
    const error = rootCauseMessage(err);
    log.error('the payment provider refused to close the payment: the order is held', { orderId: run.orderId, error });
    return { outcome: 'REFUSED', error };
  }
}

function flagSilentProvider(run: OrderRun, since: number): void {
  const from = new Date(since).toISOString();
  log.error('the payment provider cannot say whether the order was paid: the order is held', { orderId: run.orderId });
  run.attention.note(
    CLOSING_KEY,
    `the payment provider has not answered since ${from}: the order is held, not cancelled, until it says whether ` +
      `the customer paid; to cancel without it, ${forceCancelHint(run)}`,
  );
}

/** The one flag of an order awaiting funds: raised once, as its hold ends. */
function flagFundsOutlasted(run: OrderRun, holdEndsAt: string): void {
  log.error("the payment's money did not come within AWAITING_FUNDS_MAX: the order is cancelled", {
    orderId: run.orderId,
  });
  run.attention.note(
    FUNDS_KEY,
    `the payment's money was still on its way when its hold ended (${holdEndsAt}): the order is cancelled, its ` +
      'stock and coupon released; money that still comes is refunded. Check the payment at the provider',
  );
}

/**
 * The run waits on `on` since the closing began: set at the first answer that holds the order, so a
 * provider that closes the payment at once costs no search-attribute upsert.
 */
function heldBy(run: OrderRun, on: WaitingFor, answer: string, since: number, tries: number): void {
  // One wait at a time: money on its way is no longer a closing held, and the other way round.
  run.waits.note(on === 'FUNDS' ? CLOSING_KEY : FUNDS_KEY, null);
  run.waits.note(on === 'FUNDS' ? FUNDS_KEY : CLOSING_KEY, { on, since, lastAnswer: { answer, tries } });
}

/** What an operator may do about a held order, as every flag of the closing step says it. */
function forceCancelHint(run: OrderRun): string {
  return `POST /orders/${run.orderId}/force-cancel (a payment that still arrives is refunded)`;
}

function done(run: OrderRun, closing: Closing): Closing {
  run.closing = undefined;
  run.attention.note(CLOSING_KEY, null);
  run.waits.note(CLOSING_KEY, null);
  run.waits.note(FUNDS_KEY, null);
  return closing;
}

/** The attention item of a payment the provider refused to create: the customer cannot pay. */
const REFUSED_CREATION = 'provider:create';

/** Once the order is decided, a refused creation is no longer anything to act on. */
export function forgetRefusedCreation(run: OrderRun): void {
  run.attention.note(REFUSED_CREATION, null);
}

/**
 * A payment the placement could not create (the provider was down then), created while the order
 * waits, so the customer can still pay. A provider that refuses for good leaves the order unpayable:
 * an operator is told.
 */
export interface PaymentCreation {
  /** The order begins to close, or is decided: a payment not made yet is left to be made. */
  stop(): Promise<void>;
  /** The order waits for payment again: a payment a stop left to be made is made meanwhile. */
  resume(): void;
  /** The closing left nothing that can pay the order (or an operator forced it): none is made any more. */
  abandon(): void;
}

export function createPaymentMeanwhile(run: OrderRun): PaymentCreation {
  // Created, refused for good, or abandoned: not made again.
  let settled = false;
  let stopped = false;
  let scope = new CancellationScope();
  let creating = make(scope);

  function make(within: CancellationScope): Promise<void> {
    return within.run(async () => {
      try {
        await run.keepTrying.mustSucceed(money, 'createPayment', run.orderId);
        settled = true;
      } catch (err) {
        if (isCancellation(err)) return;
        if (failureKind(err) === undefined) throw err;
        settled = true;
        const error = rootCauseMessage(err);
        log.error('the payment provider refused to create the payment', { orderId: run.orderId, error });
        run.attention.note(
          REFUSED_CREATION,
          `the payment provider refused to create the payment (${error}): the customer cannot pay`,
        );
      }
    });
  }

  return {
    async stop() {
      stopped = true;
      scope.cancel();
      await creating;
    },
    resume() {
      if (!stopped || settled) return;
      stopped = false;
      scope = new CancellationScope();
      creating = make(scope);
    },
    abandon() {
      settled = true;
    },
  };
}
