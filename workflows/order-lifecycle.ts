import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { interactiveOptions } from './activity-options.js';
import { Attention } from './attention.js';
import { businessCause, isActivityFailure, rootCauseMessage } from './failures.js';
import { Fulfillment } from './fulfillment.js';
import {
  cancelSignal,
  extendDeadlineUpdate,
  hasShape,
  paidSignal,
  placeOrderUpdate,
  retryFulfillmentStepUpdate,
  retryRefundUpdate,
  statusQuery,
  type LifecycleStatus,
  type OrderLifecycleInput,
  type OrderShape,
  type PlacedOrder,
} from '../domain/messages.js';
import { MustSucceed } from './must-succeed.js';
import { notifyCustomer } from './notices.js';
import {
  CANCELLATION_COMPENSATION,
  OWED_AFTER_THE_CANCEL,
  type CancelReason,
  type OrderStatus,
} from '../domain/statuses.js';
import { SETTLE_EVERY_PAYMENT_PATCH } from './patches.js';
import { CustomerIdKey, NeedsAttentionKey, OrderExpiresAtKey, OrderStatusKey } from '../domain/search-attributes.js';
import { Settlement } from './settlement.js';
import { stepsFor, type Steps } from './steps.js';

const interactive = proxyActivities<Activities>(interactiveOptions);
/** Lean runs place the order inside the first workflow task: the caller's answer needs no second one. */
const inline = proxyLocalActivities<Activities>(interactiveOptions);

/** First shape only: how long the workflow waited for the placeOrder update sent with the start. */
const PLACEMENT_TIMEOUT = '1 minute';
/** If the timer fired but the database clock says "not yet" (clock skew), look again this soon. */
const NOT_DUE_RECHECK_MS = 100;

/**
 * One order, from placement to a final state: waits for payment until the deadline on a durable
 * timer, and cancels and compensates when the deadline wins. Every decision is a guarded update
 * in the database, so a payment that races the timer is settled exactly once either way.
 *
 * The rule that keeps accepted money safe: every `paid` signal the run accepted is recorded in
 * `payments` and settled — captured, refunded, or recorded as REFUND_FAILED and held for an
 * operator — before the run ends, whichever way it ends. The run has two ways out and both go
 * through `settleEverything()`: `finish()`, and the failure path, which settles before it rethrows.
 * (It never continues-as-new; a future continue-as-new must go through `finish()` too.) Steps that
 * must succeed retry until they do (MustSucceed), so an outage delays a run but cannot fail it.
 */
export async function OrderLifecycle({ orderId, adopt = false, shape }: OrderLifecycleInput): Promise<LifecycleStatus> {
  return new OrderLifecycleRun(orderId, shape).run(adopt);
}

class OrderLifecycleRun {
  private order: PlacedOrder | undefined;
  private placementRejected = false;
  private status: OrderStatus | undefined;
  private expiresAt: string | null = null;
  private cancelReason: CancelReason | null = null;
  private cancelRequested = false;
  private deadlineMoved = false;
  private waitingFor = 'the order to be placed';
  /** Set while a payment is being settled, whatever phase the run is in. */
  private busyWith: string | null = null;
  /** True once this run's own guarded cancel won: stock and coupon went back in its transaction. */
  private cancelledHere = false;
  private readonly attention: Attention;
  private readonly mustSucceed: MustSucceed;
  private readonly settlement: Settlement;
  private readonly fulfillment: Fulfillment;
  /**
   * Since the lean shape: placement as a local activity, done inside the first workflow task; no
   * placement timer (update-with-start delivers the placement with the start); the guarded cancel
   * gives stock and coupon back in its own statement, so compensation is the provider's payment
   * intent, closed while the customer is told; NeedsAttention written only when it changes.
   */
  private readonly lean: boolean;
  /** Regular activities, or local ones since the local-steps shape (workflows/steps.ts). */
  private readonly steps: Steps;

  constructor(
    private readonly orderId: string,
    /** The shape this run was started with (domain/messages.ts); runs from before shapes have none. */
    shape: OrderShape | undefined,
  ) {
    this.lean = hasShape(shape, 'lean');
    this.steps = stepsFor({ local: hasShape(shape, 'local-steps') });
    this.attention = new Attention(() => this.showDetails(), !this.lean);
    this.mustSucceed = new MustSucceed(orderId, this.attention);
    this.settlement = new Settlement(
      orderId,
      this.steps,
      this.mustSucceed,
      this.attention,
      () => this.markPaid(),
      (what) => {
        this.busyWith = what;
        this.showDetails();
      },
    );
    this.fulfillment = new Fulfillment(orderId, this.mustSucceed, this.attention);
    this.registerHandlers();
  }

  async run(adopt: boolean): Promise<LifecycleStatus> {
    this.showDetails();
    if (adopt) {
      // Reconciliation found this order without a running workflow: take it over as it stands.
      const existing = await this.mustSucceed.run('loadOrder', () => this.steps.database.loadOrder(this.orderId));
      if (existing) this.takeOver(existing);
    } else {
      // The order itself is written by the placeOrder update that update-with-start delivers with
      // the start, in the same first task: no timer needs to guard against it never coming.
      const placedOrRejected = () => this.order !== undefined || (this.placementRejected && allHandlersFinished());
      if (this.lean) await condition(placedOrRejected);
      else await condition(placedOrRejected, PLACEMENT_TIMEOUT);
    }
    if (!this.order) {
      upsertSearchAttributes([{ key: OrderStatusKey, value: 'REJECTED' }]);
      return this.finish('nothing: the order was not placed');
    }

    try {
      await this.awaitPaymentOrDeadline();
      // A run that finds its order already CANCELLED (a replayed placement) re-drives compensation:
      // every step is idempotent, so this only repairs what an earlier run could not finish.
      if (this.status === 'CANCELLED') await this.compensateCancellation();
      if (this.status === 'PAID') await this.fulfill();
      await this.settlement.settleQueued(); // payments that arrived meanwhile are refunded
    } catch (err) {
      // Failing still settles what the run accepted first (runs from before the rule did not).
      if (!this.settlement.settled && patched(SETTLE_EVERY_PAYMENT_PATCH)) {
        await CancellationScope.nonCancellable(() => this.settleEverything());
      }
      throw err;
    }
    return this.finish(
      this.status === 'PAID' ? 'nothing: the order is paid and fulfilled' : 'nothing: the order is cancelled',
    );
  }

  private registerHandlers(): void {
    setHandler(
      placeOrderUpdate,
      async (request) => {
        try {
          const placed = await (this.lean ? inline : interactive).placeOrder(request);
          this.takeOver(placed);
          return placed;
        } catch (err) {
          if (!this.order) this.placementRejected = true;
          throw businessCause(err);
        }
      },
      {
        validator: (request) => {
          if (request.orderId !== this.orderId)
            throw new Error(`this workflow is for order ${this.orderId}, not ${request.orderId}`);
        },
      },
    );
    setHandler(paidSignal, (notice) => this.settlement.accept(notice));
    setHandler(cancelSignal, () => {
      this.cancelRequested = true;
    });
    setHandler(
      extendDeadlineUpdate,
      async ({ minutes }) => {
        const extended = await interactive.extendDeadline({ orderId: this.orderId, minutes }).catch((err: unknown) => {
          throw businessCause(err);
        });
        this.expiresAt = extended.expiresAt;
        this.deadlineMoved = true;
        this.publishSearchAttributes();
        return extended;
      },
      {
        validator: ({ minutes }) => {
          if (!Number.isInteger(minutes) || minutes <= 0) throw new Error('minutes must be a positive whole number');
          if (this.status !== 'UNPAID')
            throw ApplicationFailure.nonRetryable('the order is no longer unpaid', 'ORDER_NOT_UNPAID');
        },
      },
    );
    setHandler(retryFulfillmentStepUpdate, async ({ step }) => ({ step, status: await this.fulfillment.retry(step) }), {
      validator: ({ step }) => this.fulfillment.assertRetryable(step),
    });
    setHandler(retryRefundUpdate, ({ paymentId }) => this.settlement.retry(paymentId), {
      validator: ({ paymentId }) => this.settlement.assertRetryable(paymentId),
    });
    setHandler(statusQuery, () => this.snapshot());
  }

  private async awaitPaymentOrDeadline(): Promise<void> {
    let recheckMs: number | undefined;
    while (this.status === 'UNPAID') {
      this.waitFor(`payment until ${this.expiresAt}`);
      const woken = await wakeEarlyOrAfter(
        () => this.settlement.hasWork || this.cancelRequested || this.deadlineMoved,
        recheckMs ?? msUntil(this.expiresAt!),
      );
      recheckMs = undefined;
      this.deadlineMoved = false;
      await this.settlement.settleQueued();
      if (this.status !== 'UNPAID') return;
      if (!this.cancelRequested && woken) continue;
      const reason: CancelReason = this.cancelRequested ? 'CUSTOMER' : 'PAYMENT_TIMEOUT';
      this.cancelRequested = false;
      const result = await this.mustSucceed.run('cancelOrder', () =>
        this.steps.database.cancelOrder({ orderId: this.orderId, reason }),
      );
      if (result.outcome === 'CANCELLED') {
        this.status = 'CANCELLED';
        this.cancelReason = reason;
        this.cancelledHere = true;
      } else if (result.outcome === 'NOT_DUE') {
        // The deadline moved, or our clock ran ahead of the database's: wait for the database's deadline.
        this.expiresAt = result.expiresAt;
        recheckMs = Math.max(msUntil(result.expiresAt), NOT_DUE_RECHECK_MS);
      } else {
        this.status = result.status;
      }
      this.publishSearchAttributes();
    }
  }

  /**
   * Only the winner of the guarded cancel gets here, so each step runs for one order once. A lean
   * run's own cancel gave stock and coupon back in its transaction: what is left is the provider's
   * payment intent, closed while the customer is told. An order found cancelled already (a
   * replayed placement), or a first-shape run, gives everything back here; every step is idempotent.
   */
  private async compensateCancellation(): Promise<void> {
    const steps = this.lean && this.cancelledHere ? OWED_AFTER_THE_CANCEL : CANCELLATION_COMPENSATION;
    this.waitFor(`${steps.join(', ')} and the customer's notice`);
    const givingBack = Promise.allSettled(
      steps.map((step) => this.mustSucceed.run(step, () => this.compensationStep(step))),
    );
    if (!this.lean) await givingBack; // the first shape notified only after giving back
    await notifyCustomer(
      { orderId: this.orderId, template: 'ORDER_CANCELLED' },
      this.steps,
      this.mustSucceed,
      this.attention,
    );
    const released = await givingBack;
    const failed = released.flatMap((r, i) =>
      r.status === 'rejected' ? [{ step: steps[i]!, reason: r.reason as unknown }] : [],
    );
    if (failed.length === 0) return;
    if (!patched(SETTLE_EVERY_PAYMENT_PATCH)) {
      // Runs from before: a failed workflow, listed by NeedsAttention.
      upsertSearchAttributes([{ key: NeedsAttentionKey, value: true }]);
      throw failed[0]!.reason;
    }
    // Only a rejection for good gets here (the steps retry through outages): flag it and go on settling.
    for (const { step, reason } of failed) {
      if (!isActivityFailure(reason)) throw reason;
      const error = rootCauseMessage(reason);
      log.error('compensation step failed for good', { orderId: this.orderId, step, error });
      this.attention.note(`compensation:${step}`, `${step} failed for good (${error}): do it by hand at the provider`);
    }
  }

  private compensationStep(step: (typeof CANCELLATION_COMPENSATION)[number]): Promise<unknown> {
    switch (step) {
      case 'releaseStock':
        return this.steps.database.releaseStock(this.orderId);
      case 'releaseCoupon':
        return this.steps.database.releaseCoupon(this.orderId);
      case 'closePaymentIntent':
        return this.steps.money.closePaymentIntent(this.orderId);
    }
  }

  /** Fulfillment runs while further payments (double payments) are still settled, i.e. refunded. */
  private async fulfill(): Promise<void> {
    this.waitFor('fulfillment: invoice, notification, loyalty points');
    let done = false;
    let failure: { error: unknown } | undefined;
    void this.fulfillment.run().then(
      () => (done = true),
      (error: unknown) => {
        failure = { error };
        done = true;
      },
    );
    while (!done) {
      await condition(() => done || this.settlement.hasWork);
      await this.settlement.settleQueued();
    }
    if (failure) throw failure.error;
  }

  /** The only way out of a run: returns once no handler runs and every accepted payment is settled. */
  private async settleEverything(): Promise<void> {
    for (;;) {
      await condition(() => allHandlersFinished() && (this.settlement.hasWork || this.settlement.settled));
      // Runs from before the rule ended with the payments they had not settled.
      if (!this.settlement.hasWork || !patched(SETTLE_EVERY_PAYMENT_PATCH)) return;
      await this.settlement.settleQueued();
    }
  }

  private async finish(nextStep: string): Promise<LifecycleStatus> {
    this.waitFor(nextStep);
    await this.settleEverything();
    log.info('order lifecycle finished', {
      orderId: this.orderId,
      status: this.status,
      workflowId: workflowInfo().workflowId,
    });
    return this.snapshot();
  }

  /** The first placement (or adoption) that succeeds defines the order; replays change nothing. */
  private takeOver(placed: PlacedOrder): void {
    if (this.order) return;
    this.order = placed;
    this.status = placed.status;
    this.expiresAt = placed.expiresAt;
    this.publishSearchAttributes();
  }

  private markPaid(): void {
    this.status = 'PAID';
    this.publishSearchAttributes();
  }

  private publishSearchAttributes(): void {
    this.showDetails();
    upsertSearchAttributes([
      { key: OrderStatusKey, value: this.status ?? 'PLACING' },
      { key: CustomerIdKey, value: this.order!.customerId },
      { key: OrderExpiresAtKey, value: new Date(this.expiresAt!) },
    ]);
  }

  private waitFor(what: string): void {
    this.waitingFor = what;
    this.showDetails();
  }

  /** The Web UI's "current details": what this order is and what it waits for, in plain words. */
  private showDetails(): void {
    setCurrentDetails(describeOrder(this.snapshot(), this.order, this.attention.items));
  }

  private snapshot(): LifecycleStatus {
    return {
      orderId: this.orderId,
      status: this.status ?? (this.placementRejected ? 'REJECTED' : 'PLACING'),
      expiresAt: this.expiresAt,
      cancelReason: this.cancelReason,
      waitingFor: this.busyWith ?? this.waitingFor,
      payments: [...this.settlement.payments].map(([paymentId, status]) => ({ paymentId, status })),
      fulfillment: this.status === 'PAID' ? { ...this.fulfillment.status } : null,
      needsAttention: this.attention.items,
    };
  }
}

function describeOrder(now: LifecycleStatus, order: PlacedOrder | undefined, attention: string[]): string {
  const lines = [`**${now.status}**${now.cancelReason ? ` (${now.cancelReason})` : ''}`];
  if (order) lines.push(`${order.customerId} · ${(order.totalCents / 100).toFixed(2)} · deadline ${now.expiresAt}`);
  lines.push(`Waiting for: ${now.waitingFor}`);
  if (now.fulfillment)
    lines.push(
      `Fulfillment: ${Object.entries(now.fulfillment)
        .map(([step, s]) => `${step} ${s}`)
        .join(', ')}`,
    );
  for (const item of attention) lines.push(`Needs attention: ${item}`);
  return lines.join('\n\n');
}

/** condition() with a timeout of 0 would wait forever, so a deadline already past is checked at once. */
async function wakeEarlyOrAfter(woken: () => boolean, ms: number): Promise<boolean> {
  return ms > 0 ? condition(woken, ms) : woken();
}

function msUntil(iso: string): number {
  return Math.max(0, Date.parse(iso) - Date.now());
}
