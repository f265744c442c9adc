import { CancellationScope, condition, log, sleep } from '@temporalio/workflow';
import { businessFailure } from '../domain/errors.js';
import type { PaymentNotice, RefundFailure } from '../domain/messages.js';
import type { PaymentStatus } from '../domain/statuses.js';
import { database, money } from './activity-proxies.js';
import type { Attention } from './attention.js';
import { failureKind, rootCauseMessage } from './failures.js';
import type { KeepTrying } from './keep-trying.js';
import { notifyCustomer } from './notices.js';
import type { Waits } from './waits.js';

/**
 * How often a refund's failure is judged again while the payment's refund is still being made: it
 * may be of that refund, which the provider answered before we recorded it.
 */
const REFUND_IN_FLIGHT_RECHECK = { firstMs: 5_000, maxMs: 5 * 60_000 };

/**
 * Every payment a run accepts takes this one path, in OrderLifecycle and SettleLatePayment alike:
 * record it (the database decides whether it pays the order); if it does not, refund it and tell
 * the customer. `settle()` returns only once the payment is settled — captured, refunded, or, when
 * the provider rejects the refund for good, recorded as REFUND_FAILED, flagged, and retried when an
 * operator asks — so a run that waits for its handlers to finish has settled every payment it took.
 * Settling runs outside any cancellation (money is never left half-handled) and one payment at a
 * time, in the order they arrived.
 */
export class AcceptedPayments {
  /** Every payment this run settles, by id, as the database last answered (RECEIVED until then). */
  readonly statuses = new Map<string, PaymentStatus>();
  /** Refunds the provider rejected for good, waiting for an operator's retry. */
  private readonly held = new Set<string>();
  private readonly retryRequested = new Set<string>();
  private turns: Promise<unknown> = Promise.resolve();
  private settling = 0;

  constructor(
    private readonly run: {
      orderId: string;
      keepTrying: KeepTrying;
      attention: Attention;
      /** Holds a rejected refund's run for an operator (WaitingFor). */
      waits: Waits;
      /** Called when a payment has paid the order. */
      onPaid?: () => void;
    },
  ) {}

  /** No payment is being settled (one held for an operator does not count): the run may decide. */
  get idle(): boolean {
    return this.settling === 0;
  }

  /** For the `paid` signal. A redelivery, or a notice for another order, is dropped: the database would refuse it too. */
  async settle(notice: PaymentNotice): Promise<void> {
    if (notice.orderId !== this.run.orderId || this.statuses.has(notice.paymentId)) return;
    this.statuses.set(notice.paymentId, 'RECEIVED');
    if (await this.inTurn(() => this.record(notice))) await this.giveBack(notice.paymentId);
  }

  /**
   * For a refund the provider failed after accepting it: the database decides whether the failure
   * still applies (its refund is the payment's recorded one, REFUNDED), so a redelivery or an older
   * attempt's failure changes nothing; if it does, the money is owed again and is held like a
   * refund rejected at once, until an operator retries it. While the payment's refund is still
   * being made, the failure may be of it (the provider's events can overtake our record of its
   * answer), so it is judged again, after a while, until that refund is recorded.
   */
  async refundFailedLater(failure: RefundFailure): Promise<void> {
    if (failure.orderId !== this.run.orderId) return;
    let waitMs = REFUND_IN_FLIGHT_RECHECK.firstMs;
    for (;;) {
      const { failed, refundInFlight } = await this.inTurn(() =>
        this.run.keepTrying.mustSucceed(database, 'recordRefundFailedLater', failure),
      );
      if (failed) break;
      if (!refundInFlight) return;
      // Outside the turn: the refund being made may be this run's own (an operator's retry).
      await untilSettled(() => sleep(waitMs));
      waitMs = Math.min(2 * waitMs, REFUND_IN_FLIGHT_RECHECK.maxMs);
    }
    const { paymentId, refundRef, reason } = failure;
    this.flag(paymentId, `refund ${refundRef} of ${paymentId} failed after the provider accepted it`, reason);
    await this.giveBack(paymentId, { held: true });
  }

  /** For the retry update's validator: only a refund this run holds as rejected can be retried. */
  assertRetryable(paymentId: string): void {
    if (!this.held.has(paymentId)) throw businessFailure('REFUND_NOT_FAILED', { paymentId });
  }

  /** An operator's retry: the held refund is tried again at once, by the handler that holds it. */
  retry(paymentId: string): { paymentId: string; status: PaymentStatus } {
    this.held.delete(paymentId);
    this.retryRequested.add(paymentId);
    return { paymentId, status: 'REFUND_PENDING' };
  }

  /** One payment at a time, and never cancelled halfway. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    this.settling++;
    const turn = this.turns.then(() => CancellationScope.nonCancellable(work));
    this.turns = turn.catch(() => undefined);
    return turn.finally(() => this.settling--);
  }

  /** Decides the payment from the webhook's record of it; true when it is owed back. */
  private async record(notice: PaymentNotice): Promise<boolean> {
    const { keepTrying, onPaid } = this.run;
    const decided = await keepTrying.mustSucceed(database, 'settlePayment', notice);
    if (decided.outcome === 'NOT_RECEIVED') {
      // Not a payment the webhook verified (sent straight to Temporal): forgotten, so that the
      // real payment of that id, should it come, is settled.
      this.statuses.delete(notice.paymentId);
      log.warn('paid signal for a payment the webhook never recorded: dropped', { ...notice });
      return false;
    }
    this.statuses.set(notice.paymentId, decided.paymentStatus);
    if (decided.outcome === 'PAID') onPaid?.();
    // REFUND_FAILED: a redelivery of a payment whose rejected refund another run holds.
    return decided.paymentStatus === 'REFUND_PENDING';
  }

  /** Refunds the payment; one the provider rejects is held until an operator retries it, then tried again. */
  private async giveBack(paymentId: string, { held } = { held: false }): Promise<void> {
    if (held) await this.reopenOnRetry(paymentId);
    while (!(await this.inTurn(() => this.refund(paymentId)))) await this.reopenOnRetry(paymentId);
  }

  private async reopenOnRetry(paymentId: string): Promise<void> {
    await untilSettled(() => condition(() => this.retryRequested.delete(paymentId)));
    this.run.waits.note(`refund:${paymentId}`, null); // the operator acted: the run no longer waits on one
    await this.inTurn(() => this.run.keepTrying.mustSucceed(database, 'reopenRefund', paymentId));
    this.statuses.set(paymentId, 'REFUND_PENDING');
  }

  /**
   * True once this run is done with the refund: refunded, or found not owed back by it; false when
   * the provider rejected it for good and it is held for an operator.
   */
  private async refund(paymentId: string): Promise<boolean> {
    const { orderId, keepTrying, attention } = this.run;
    let answer;
    try {
      answer = await keepTrying.mustSucceed(money, 'refundPayment', paymentId);
    } catch (err) {
      if (failureKind(err) === undefined) throw err;
      await this.hold(paymentId, rootCauseMessage(err));
      return false;
    }
    if (!answer.refunded) {
      // Another run recorded its refund as rejected and holds it (REFUND_FAILED): the customer
      // has not got the money back, so this run must not say so.
      if (answer.status) this.statuses.set(paymentId, answer.status);
      log.warn('refund not made by this run: the payment is not owed back by it', { orderId, paymentId, ...answer });
      return true;
    }
    this.statuses.set(paymentId, 'REFUNDED');
    attention.note(`refund:${paymentId}`, null);
    await notifyCustomer({ orderId, template: 'PAYMENT_REFUNDED', key: paymentId }, keepTrying, attention);
    return true;
  }

  private async hold(paymentId: string, error: string): Promise<void> {
    await this.run.keepTrying.mustSucceed(database, 'recordRefundFailure', { paymentId, error });
    this.flag(paymentId, `refund of ${paymentId} rejected`, error);
  }

  /** A refund owed again (REFUND_FAILED in the database): held for an operator, who is told how to retry it. */
  private flag(paymentId: string, what: string, error: string): void {
    const { orderId, attention, waits } = this.run;
    this.statuses.set(paymentId, 'REFUND_FAILED');
    this.held.add(paymentId);
    log.error(`${what}: it is owed and waits for an operator`, { orderId, paymentId, error });
    waits.note(`refund:${paymentId}`, { on: 'OPERATOR', since: Date.now(), detail: `${what} (${error})` });
    attention.note(
      `refund:${paymentId}`,
      `${what} (${error}): fix the cause, then POST /orders/${orderId}/payments/${paymentId}/refund/retry`,
    );
  }
}

/**
 * A wait for money still owed: a cancellation of the run (the Web UI's "Request Cancellation") does
 * not end it, or the payment would be left with no run to hold it and no retry that reaches it. The
 * run ends once the payment is settled; only a termination ends it sooner.
 */
function untilSettled(wait: () => Promise<unknown>): Promise<unknown> {
  return CancellationScope.nonCancellable(wait);
}
