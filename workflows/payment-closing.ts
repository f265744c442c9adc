import { CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import ms from 'ms';
import type { ClosingOutcome } from '../activities/provider-payments.js';
import type { WaitingFor } from '../domain/search-attributes.js';
import type { CancelReason } from '../domain/statuses.js';
import { money } from './activity-proxies.js';
import { STUCK_AFTER } from './activity-options.js';
import { failureKind, rootCauseMessage } from './failures.js';
import type { OrderRun } from './order-run.js';

/** While a bank or 3-D Secure step is under way, the provider is asked again this often. */
const PROCESSING_RECHECK_MS = ms('1 minute');
/** A provider that did not answer is asked again after 5 s, then twice as long each time, up to a minute. */
const UNAVAILABLE_FIRST_WAIT_MS = ms('5 seconds');
const UNAVAILABLE_MAX_WAIT_MS = ms('1 minute');
/** How long an order waits for a silent provider before an operator is asked to look (as for a stuck call). */
const SILENT_PROVIDER_ALERT_MS = ms(STUCK_AFTER);
/** The closing's item among the run's attention items and its waits. */
const CLOSING_KEY = 'provider:closing';

/** What closing the payment came to: closed, so the guarded cancel may run; or the order decided without it. */
export type Closing =
  /** Nothing can pay the order any more (or an operator forced it): the guarded cancel may run. */
  | { outcome: 'CLOSED' }
  /** A payment paid the order: the provider's, or a webhook's that came meanwhile. */
  | { outcome: 'PAID' }
  /** The provider was not asked: the closing activity found the order not due, or decided. */
  | Extract<ClosingOutcome, { outcome: 'NOT_DUE' | 'ALREADY_FINAL' }>;

/**
 * Provider first: at the deadline (or the customer's cancel) the payment is closed at the provider
 * before the order lets go of its stock and coupon, because only the provider knows whether the
 * customer is paying right now. Its answer decides:
 * - cancelled: the order may be cancelled;
 * - already succeeded: the provider's payment is recorded and settled like a webhook's, so it pays the
 *   order however late its webhook comes;
 * - processing (a bank or 3-D Secure step): asked again each minute, and flagged NeedsAttention after
 *   STUCK_AFTER, since a step the customer abandoned may never end;
 * - unavailable: nothing is known, so nothing is released. Asked again with a backoff; after
 *   STUCK_AFTER the order is flagged NeedsAttention, and an operator may force the cancel (a payment
 *   that still arrives is then refunded).
 * A payment that arrives through the webhook meanwhile ends the wait at once.
 */
export async function closePaymentFirst(run: OrderRun, reason: CancelReason): Promise<Closing> {
  run.enter('closing-payment');
  const since = Date.now();
  let unavailableWaitMs = UNAVAILABLE_FIRST_WAIT_MS;
  for (let tries = 1; ; tries++) {
    if (run.forceCancelRequested) {
      log.warn('cancel forced by an operator without the provider closing the payment', { orderId: run.orderId });
      return done(run, { outcome: 'CLOSED' });
    }
    const answer = await closeAtProvider(run, reason);
    let waitMs: number;
    switch (answer.outcome) {
      case 'CLOSED':
      case 'NOT_CANCELLABLE':
        return done(run, { outcome: 'CLOSED' });
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
      case 'PROCESSING':
        waitMs = PROCESSING_RECHECK_MS;
        // A step the customer abandoned (a 3-D Secure challenge left open) may never end by itself.
        if (Date.now() - since >= SILENT_PROVIDER_ALERT_MS) flagLongProcessing(run, since);
        break;
      case 'UNAVAILABLE':
        waitMs = unavailableWaitMs;
        unavailableWaitMs = Math.min(unavailableWaitMs * 2, UNAVAILABLE_MAX_WAIT_MS);
        if (Date.now() - since >= SILENT_PROVIDER_ALERT_MS) flagSilentProvider(run, since);
        break;
      case 'REFUSED':
        waitMs = UNAVAILABLE_MAX_WAIT_MS;
        run.attention.note(
          CLOSING_KEY,
          `the payment provider refused to close the payment (${answer.error}): the order is held; check the payment ` +
            `at the provider, then ${forceCancelHint(run)}`,
        );
        break;
    }
    heldBy(run, answer, { since, tries });
    // A webhook's payment, or an operator's force-cancel, ends the wait early.
    await condition(() => run.status !== 'UNPAID' || run.forceCancelRequested, waitMs);
    if (run.status === 'PAID') return done(run, { outcome: 'PAID' });
  }
}

/**
 * The closing activity's answer, or REFUSED when the provider rejected the cancel for good (a
 * payment it does not know): nothing is known then either, so the order is held for an operator.
 */
async function closeAtProvider(
  run: OrderRun,
  reason: CancelReason,
): Promise<ClosingOutcome | { outcome: 'REFUSED'; error: string }> {
  try {
    return await run.keepTrying.mustSucceed('closePayment', () => money.closePayment({ orderId: run.orderId, reason }));
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

function flagLongProcessing(run: OrderRun, since: number): void {
  const from = new Date(since).toISOString();
  log.error('the payment has been processing at the provider for long: the order is held', { orderId: run.orderId });
  run.attention.note(
    CLOSING_KEY,
    `the payment has been processing at the provider since ${from} (a bank or 3-D Secure step, perhaps abandoned): ` +
      `the order is held until it ends; check the payment at the provider, or ${forceCancelHint(run)}`,
  );
}

/** The provider's answers that hold the order, in the words the Web UI's details use. */
const HELD_BY: Record<'PROCESSING' | 'UNAVAILABLE' | 'REFUSED', { on: WaitingFor; answer: string }> = {
  PROCESSING: { on: 'PROVIDER_CLOSING', answer: 'processing' },
  UNAVAILABLE: { on: 'PROVIDER_CLOSING', answer: 'unavailable' },
  // Refused for good: asking again changes nothing, an operator has to look.
  REFUSED: { on: 'OPERATOR', answer: 'refused' },
};

/**
 * The run waits on the provider (WaitingFor), since the closing began: set at the first answer that
 * holds the order, so a provider that closes the payment at once costs no search-attribute upsert.
 */
function heldBy(
  run: OrderRun,
  answer: { outcome: keyof typeof HELD_BY; error?: string },
  { since, tries }: { since: number; tries: number },
): void {
  const { on, answer: words } = HELD_BY[answer.outcome];
  run.waits.note(CLOSING_KEY, {
    on,
    since,
    lastAnswer: { answer: answer.error ? `${words} (${answer.error})` : words, tries },
  });
}

/** What an operator may do about a held order, as every flag of the closing step says it. */
function forceCancelHint(run: OrderRun): string {
  return `POST /orders/${run.orderId}/force-cancel (a payment that still arrives is refunded)`;
}

function done(run: OrderRun, closing: Closing): Closing {
  run.attention.note(CLOSING_KEY, null);
  run.waits.note(CLOSING_KEY, null);
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
        await run.keepTrying.mustSucceed('createPayment', () => money.createPayment(run.orderId));
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
