import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  placedOrderOf,
  type ContinuedRun,
  type LifecyclePhase,
  type LifecycleStatus,
  type OrderOutcome,
  type OrderForRun,
  type PaymentReminder,
  type PlacedOrder,
} from '../domain/messages.js';
import { OrderExpiresAtKey, OrderStatusKey } from '../domain/search-attributes.js';
import { isOpen, type CancelReason, type OrderStatus } from '../domain/statuses.js';
import { AcceptedPayments } from './accepted-payments.js';
import { Attention } from './attention.js';
import { continueAsNewIfDue } from './continue-as-new.js';
import { Fulfillment } from './fulfillment.js';
import { KeepTrying } from './keep-trying.js';
import { Waits } from './waits.js';

/**
 * A placed deadline this close to the one the run was started with (the API's reckoning, a moment
 * before the placement's) is the same deadline to an operator's filter: it is not written again.
 */
const SAME_DEADLINE_WITHIN_MS = 1000;

/** Why the wait for payment ends before the deadline: a payment paid the order, or the customer cancelled, or the deadline moved. */
export type Wake = 'paid' | 'cancel-requested' | 'deadline-moved';

/**
 * One order's run: what it knows, and how it shows it — the search attributes operators filter
 * by, the Web UI's current details, and the `status` query. The business process itself is
 * workflows/order-lifecycle.ts; the messages that change this state are workflows/order-handlers.ts.
 */
export class OrderRun {
  order: PlacedOrder | undefined;
  placementRejected = false;
  status: OrderStatus | undefined;
  expiresAt: string | null = null;
  cancelReason: CancelReason | null = null;
  /** The guarded cancel told the customer in the same call: no notice is owed. */
  customerToldOfCancel = false;
  phase: LifecyclePhase = 'placing';
  /** Set by a message that ends the wait for payment early; the run takes it when it wakes. */
  wake: Wake | undefined;
  /** The customer's reminder before the deadline, while reminders are on (PAYMENT_REMINDER_BEFORE). */
  reminder: PaymentReminder | undefined;
  /** The order's payment is at a provider that cancels payments: closed there before the order is cancelled. */
  closesAtProvider = false;
  /** An operator's force-cancel: the closing stops waiting for the provider. */
  forceCancelRequested = false;
  /** The provider said the payment failed (paymentFailed): the closing asks it at once, not at its next recheck. */
  recheckRequested = false;
  /** While AWAITING_FUNDS: when the hold ends (AWAITING_FUNDS_MAX past the deadline). */
  holdEndsAt: string | null = null;
  /** The closing at the provider under way: why, and since when (carried into a continued run). */
  closing: { reason: CancelReason; since: number } | undefined;
  /** The cancelled order's payment still being closed at the provider (closeAfterCancel): since when; carried too. */
  closingAfterCancel: { since: number } | undefined;
  /**
   * What the order's search attributes say now: what the run was started with (the API's, or those
   * of the run it continues), then what it wrote. Each upsert is a billable action, so only a change
   * is written.
   */
  private readonly published = {
    status: workflowInfo().typedSearchAttributes.get(OrderStatusKey),
    expiresAt: workflowInfo().typedSearchAttributes.get(OrderExpiresAtKey)?.getTime(),
  };
  readonly attention = new Attention(() => this.showDetails());
  readonly waits = new Waits(() => this.showDetails());
  readonly keepTrying: KeepTrying;
  readonly payments: AcceptedPayments;
  readonly fulfillment: Fulfillment;

  constructor(
    readonly orderId: string,
    /** What a previous run handed over, when this one continues it. */
    continued: ContinuedRun = {},
  ) {
    this.closing = continued.closing;
    this.closingAfterCancel = continued.closingAfterCancel;
    this.keepTrying = new KeepTrying(orderId, this.attention);
    this.payments = new AcceptedPayments({
      orderId,
      keepTrying: this.keepTrying,
      attention: this.attention,
      waits: this.waits,
      onPaid: () => this.markPaid(),
    });
    this.fulfillment = new Fulfillment(orderId, this.keepTrying, this.attention, this.waits);
  }

  /**
   * Where a run that waits long continues as new (workflows/continue-as-new.ts): between two
   * questions of the closing at the provider, the one wait of an order that takes rounds. What the
   * database does not hold is handed over; the order, its payments and its fulfillment are read
   * again from it.
   */
  async continueAsNewIfDue(): Promise<void> {
    await continueAsNewIfDue(this.orderId, {
      paymentsIdle: this.payments.idle,
      continued: () => ({
        ...(this.closing ? { closing: this.closing } : {}),
        ...(this.closingAfterCancel ? { closingAfterCancel: this.closingAfterCancel } : {}),
      }),
    });
  }

  /** A customer's cancel outlasts other wakes until the run acts on it. */
  wakeUp(reason: Wake): void {
    if (this.wake !== 'cancel-requested') this.wake = reason;
  }

  /** The first placement (or adoption) that succeeds defines the order; a replayed placement changes nothing. */
  takeOver(placed: OrderForRun): void {
    if (this.order) return;
    this.order = placedOrderOf(placed);
    this.reminder = placed.reminder && { ...placed.reminder };
    // A payment settled while the order was being read (an adopting run's loadOrder retried through
    // an outage) has decided it already: the order as read is older.
    this.status ??= placed.status;
    this.closesAtProvider = placed.payment !== null;
    this.expiresAt = placed.expiresAt;
    this.publishSearchAttributes();
  }

  cancelled(reason: CancelReason, customerTold: boolean): void {
    this.status = 'CANCELLED';
    this.cancelReason = reason;
    this.customerToldOfCancel = customerTold;
    this.publishSearchAttributes();
  }

  /** Still open for payment: UNPAID, or AWAITING_FUNDS (its money on its way). */
  get open(): boolean {
    return isOpen(this.status);
  }

  /** The payment's money is on its way: the order holds its stock and coupon until it comes, or not. */
  awaitFunds(holdEndsAt: string): void {
    this.status = 'AWAITING_FUNDS';
    this.holdEndsAt = holdEndsAt;
    this.phase = 'awaiting-funds';
    this.publishSearchAttributes();
  }

  /**
   * When the customer is to be reminded (workflow time, ms): the reminder's lead before the current
   * deadline, for an order still UNPAID (not awaiting funds) and not reminded yet. A time already
   * past when the run would set the timer (an order adopted late) is no reminder: it is sent on time
   * or not at all. Undefined: no reminder to wait for.
   */
  get remindAt(): number | undefined {
    if (!this.reminder || this.reminder.sent || this.status !== 'UNPAID') return undefined;
    const at = Date.parse(this.expiresAt!) - this.reminder.beforeMs;
    return at > Date.now() ? at : undefined;
  }

  reminded(): void {
    this.reminder!.sent = true;
  }

  settledElsewhere(status: OrderStatus): void {
    this.status = status;
    this.publishSearchAttributes();
  }

  deadlineMoved(expiresAt: string): void {
    this.expiresAt = expiresAt;
    this.publishSearchAttributes();
  }

  enter(phase: LifecyclePhase): void {
    // A force-cancel is for the closing it interrupted: a run that waits again (its deadline had
    // moved) drops it, so the next deadline's closing asks the provider again.
    if (phase === 'awaiting-payment') this.forceCancelRequested = false;
    this.phase = phase;
    this.showDetails();
  }

  /** No order: the deadline the run was started with was never placed. */
  rejected(): void {
    upsertSearchAttributes([
      { key: OrderStatusKey, value: 'REJECTED' },
      ...(this.published.expiresAt === undefined ? [] : [{ key: OrderExpiresAtKey, value: null }]),
    ]);
  }

  snapshot(): LifecycleStatus {
    return {
      orderId: this.orderId,
      status: this.status ?? (this.placementRejected ? 'REJECTED' : 'PLACING'),
      expiresAt: this.expiresAt,
      cancelReason: this.cancelReason,
      phase: this.phase,
      waitingFor: this.waitingFor(),
      payments: [...this.payments.statuses].map(([paymentId, status]) => ({ paymentId, status })),
      fulfillment: this.status === 'PAID' ? { ...this.fulfillment.status } : null,
      needsAttention: this.attention.items,
      waits: this.waits.described,
    };
  }

  /** The run's result: what its end came to (OrderOutcome). */
  outcome(): OrderOutcome {
    const { status, cancelReason, payments, fulfillment, needsAttention } = this.snapshot();
    return {
      status,
      ...(cancelReason && { cancelReason }),
      ...(payments.length > 0 && { payments }),
      ...(fulfillment && { fulfillment }),
      needsAttention,
    };
  }

  private markPaid(): void {
    this.status = 'PAID';
    this.wakeUp('paid');
    this.publishSearchAttributes();
  }

  private publishSearchAttributes(): void {
    // Without the order (a payment settled before it was read) there is nothing to publish yet:
    // takeOver publishes once it has it.
    if (this.order) {
      const changed: SearchAttributeUpdatePair[] = [];
      const status = this.status ?? 'PLACING';
      if (status !== this.published.status) {
        changed.push({ key: OrderStatusKey, value: status });
        this.published.status = status;
      }
      const expiresAt = Date.parse(this.expiresAt!);
      const shown = this.published.expiresAt;
      if (shown === undefined || Math.abs(expiresAt - shown) >= SAME_DEADLINE_WITHIN_MS) {
        changed.push({ key: OrderExpiresAtKey, value: new Date(expiresAt) });
        this.published.expiresAt = expiresAt;
      }
      if (changed.length > 0) upsertSearchAttributes(changed);
    }
    this.showDetails();
  }

  private waitingFor(): string {
    if (!this.payments.idle) return 'a payment to be settled';
    switch (this.phase) {
      case 'placing':
        return 'the order to be placed';
      case 'awaiting-payment':
        return `payment until ${this.expiresAt}`;
      case 'awaiting-funds':
        return `the payment's money, on its way (its event decides; held until ${this.holdEndsAt})`;
      case 'closing-payment':
        return this.forceCancelRequested
          ? 'the cancel an operator forced'
          : 'the payment provider to close the payment (or say it was paid)';
      case 'compensating':
        return "the customer's notice";
      case 'fulfilling':
        return 'fulfillment: invoice, notification, loyalty points';
      case 'ending':
        return 'open messages and owed refunds to be finished';
    }
  }

  /** The Web UI's "current details": what this order is and what it waits for, in plain words. */
  private showDetails(): void {
    const now = this.snapshot();
    const lines = [`**${now.status}**${now.cancelReason ? ` (${now.cancelReason})` : ''}`];
    if (this.order) {
      lines.push(`${this.order.customerId} · ${(this.order.totalCents / 100).toFixed(2)} · deadline ${now.expiresAt}`);
    }
    lines.push(`Waiting for: ${now.waitingFor}`);
    lines.push(...now.waits);
    if (now.fulfillment) {
      const steps = Object.entries(now.fulfillment).map(([step, status]) => `${step} ${status}`);
      lines.push(`Fulfillment: ${steps.join(', ')}`);
    }
    for (const item of now.needsAttention) lines.push(`Needs attention: ${item}`);
    setCurrentDetails(lines.join('\n\n'));
  }
}
