import { ApplicationFailure, log, patched } from '@temporalio/workflow';
import type { Attention } from './attention.js';
import { isActivityFailure, rootCauseMessage } from './failures.js';
import type { PaymentNotice } from '../domain/messages.js';
import type { MustSucceed } from './must-succeed.js';
import { notifyCustomer } from './notices.js';
import type { PaymentStatus } from '../domain/statuses.js';
import { NOTIFY_REFUNDS_PATCH, SETTLE_EVERY_PAYMENT_PATCH } from './patches.js';
import type { Steps } from './steps.js';

/** A payment to settle, or a rejected refund an operator asked to try again. */
interface Work {
  notice: PaymentNotice;
  retryRefund: boolean;
}

/**
 * The one path every payment a run accepts takes, in OrderLifecycle and SettleLatePayment alike:
 * record it (the database decides whether it pays the order); if it does not, refund it and tell
 * the customer. Accepted payments wait in a queue until the run settles them; a run ends only
 * when the queue is empty (`settled`), so an accepted payment is always recorded and either
 * captured, refunded, or — when the provider rejects the refund for good — recorded as
 * REFUND_FAILED, flagged, and held in this run until an operator retries it.
 */
export class Settlement {
  /** Every payment this run settled, by id, as the database last answered. */
  readonly payments = new Map<string, PaymentStatus>();
  private readonly queue: Work[] = [];
  /** Refunds the provider rejected for good, waiting for an operator's retry. */
  private readonly rejected = new Map<string, PaymentNotice>();

  constructor(
    private readonly orderId: string,
    /** The run's activities: regular or local, by its shape. */
    private readonly steps: Steps,
    private readonly mustSucceed: MustSucceed,
    private readonly attention: Attention,
    /** Called when a payment has paid the order. */
    private readonly onPaid: () => void = () => undefined,
    /** Called with what the run is busy with, for its Web UI details. */
    private readonly busyWith: (what: string | null) => void = () => undefined,
  ) {}

  /** For the `paid` signal: a redelivery, or a notice for another order, is dropped. */
  accept(notice: PaymentNotice): void {
    if (
      notice.orderId !== this.orderId ||
      this.payments.has(notice.paymentId) ||
      this.queue.some((w) => w.notice.paymentId === notice.paymentId)
    ) {
      return; // the database would refuse it too; this keeps it out of the history's activities
    }
    this.queue.push({ notice, retryRefund: false });
  }

  get hasWork(): boolean {
    return this.queue.length > 0;
  }

  /** Nothing queued and no refund waiting for an operator: the run may end. */
  get settled(): boolean {
    return this.queue.length === 0 && this.rejected.size === 0;
  }

  /** Settles everything queued, in order. */
  async settleQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const work = this.queue.shift()!;
      this.busyWith(`payment ${work.notice.paymentId} to be settled`);
      if (work.retryRefund)
        await this.mustSucceed.run('reopenRefund', () => this.steps.database.reopenRefund(work.notice.paymentId));
      else if ((await this.record(work.notice)) !== 'REFUND') continue;
      await this.refund(work.notice);
    }
    this.busyWith(null);
  }

  /** For the retry update's validator: only a refund this run holds as rejected can be retried. */
  assertRetryable(paymentId: string): void {
    if (!this.rejected.has(paymentId)) {
      throw ApplicationFailure.nonRetryable(`this run holds no rejected refund for ${paymentId}`, 'REFUND_NOT_FAILED');
    }
  }

  /** An operator's retry: the refund goes back into the queue, to be tried again at once. */
  retry(paymentId: string): { paymentId: string; status: PaymentStatus } {
    const notice = this.rejected.get(paymentId)!;
    this.rejected.delete(paymentId);
    this.queue.push({ notice, retryRefund: true });
    return { paymentId, status: 'REFUND_PENDING' };
  }

  /** PAID: it paid the order. REFUND: it is owed back. HELD: a redelivery of a rejected refund another run holds. */
  private async record(notice: PaymentNotice): Promise<'PAID' | 'REFUND' | 'HELD'> {
    const settled = await this.mustSucceed.run('settlePayment', () => this.steps.database.settlePayment(notice));
    this.payments.set(notice.paymentId, settled.paymentStatus);
    if (settled.outcome === 'PAID') {
      this.onPaid();
      return 'PAID';
    }
    return settled.paymentStatus === 'REFUND_FAILED' ? 'HELD' : 'REFUND';
  }

  private async refund(notice: PaymentNotice): Promise<void> {
    const { paymentId } = notice;
    try {
      await this.mustSucceed.run('refundPayment', () => this.steps.money.refundPayment(paymentId));
    } catch (err) {
      if (!isActivityFailure(err) || !patched(SETTLE_EVERY_PAYMENT_PATCH)) throw err;
      await this.holdRejected(notice, rootCauseMessage(err));
      return;
    }
    this.payments.set(paymentId, 'REFUNDED');
    this.attention.note(`refund:${paymentId}`, null);
    if (patched(NOTIFY_REFUNDS_PATCH)) {
      await notifyCustomer(
        { orderId: this.orderId, template: 'PAYMENT_REFUNDED', key: paymentId },
        this.steps,
        this.mustSucceed,
        this.attention,
      );
    }
  }

  private async holdRejected(notice: PaymentNotice, error: string): Promise<void> {
    const { paymentId } = notice;
    await this.mustSucceed.run('recordRefundFailure', () =>
      this.steps.database.recordRefundFailure({ paymentId, error }),
    );
    this.payments.set(paymentId, 'REFUND_FAILED');
    this.rejected.set(paymentId, notice);
    log.error('the payment provider rejected a refund: it is owed and waits for an operator', {
      orderId: this.orderId,
      paymentId,
      error,
    });
    this.attention.note(
      `refund:${paymentId}`,
      `refund of ${paymentId} rejected (${error}): fix the cause, then POST /orders/${this.orderId}/payments/${paymentId}/refund/retry`,
    );
  }
}
