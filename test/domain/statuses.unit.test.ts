import { $Enums } from '@prisma/client';
import { describe, expect, it } from 'vitest';
import {
  CANCEL_REASONS,
  COUPON_STATUSES,
  COUPON_TRANSITIONS,
  FULFILLMENT_STEPS,
  ORDER_STATUSES,
  ORDER_TRANSITIONS,
  PAYMENT_STATUSES,
  REFUND_REASONS,
  STEP_STATUSES,
  STEP_TRANSITIONS,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_DELIVERY_TRANSITIONS,
  canTransition,
  isFinal,
} from '../../domain/statuses.js';
import { storedStep } from '../../store/fulfillment-steps.js';

describe('statuses and the transition table', () => {
  it('the TypeScript statuses and the database enums are the same closed sets', () => {
    expect(Object.values($Enums.OrderStatus)).toEqual(ORDER_STATUSES);
    expect(Object.values($Enums.PaymentStatus)).toEqual(PAYMENT_STATUSES);
    expect(Object.values($Enums.CancelReason)).toEqual(CANCEL_REASONS);
    expect(Object.values($Enums.RefundReason)).toEqual(REFUND_REASONS);
    expect(Object.values($Enums.StepStatus)).toEqual(STEP_STATUSES);
    expect(Object.values($Enums.FulfillmentStep)).toEqual(FULFILLMENT_STEPS.map(storedStep));
    expect(Object.values($Enums.CouponStatus)).toEqual(COUPON_STATUSES);
    expect(Object.values($Enums.WebhookDeliveryStatus)).toEqual(WEBHOOK_DELIVERY_STATUSES);
  });

  it('a webhook delivery leaves DEAD or DELIVERED only through an operator redelivery', () => {
    for (const from of ['DEAD', 'DELIVERED'] as const) {
      const moves = Object.values(WEBHOOK_DELIVERY_TRANSITIONS).filter((t) => canTransition(t, from));
      expect(moves).toEqual([WEBHOOK_DELIVERY_TRANSITIONS.redeliver]);
    }
  });

  it('a coupon is single-use: once redeemed it never moves again, and only a locked one is released', () => {
    for (const t of Object.values(COUPON_TRANSITIONS)) expect(canTransition(t, 'REDEEMED')).toBe(false);
    expect(canTransition(COUPON_TRANSITIONS.release, 'LOCKED')).toBe(true);
    expect(canTransition(COUPON_TRANSITIONS.release, 'AVAILABLE')).toBe(false);
    expect(canTransition(COUPON_TRANSITIONS.lock, 'LOCKED')).toBe(false);
  });

  it('a fulfillment step leaves FAILED only through an operator retry, and DONE is final', () => {
    expect(canTransition(STEP_TRANSITIONS.retry, 'FAILED')).toBe(true);
    expect(canTransition(STEP_TRANSITIONS.complete, 'FAILED')).toBe(false);
    for (const t of Object.values(STEP_TRANSITIONS)) expect(canTransition(t, 'DONE')).toBe(false);
  });

  it('only an unpaid order can be paid or cancelled; paid and cancelled are final', () => {
    expect(canTransition(ORDER_TRANSITIONS.pay, 'UNPAID')).toBe(true);
    expect(canTransition(ORDER_TRANSITIONS.cancel, 'UNPAID')).toBe(true);
    for (const from of ['PAID', 'CANCELLED'] as const) {
      expect(canTransition(ORDER_TRANSITIONS.pay, from)).toBe(false);
      expect(canTransition(ORDER_TRANSITIONS.cancel, from)).toBe(false);
      expect(isFinal(from)).toBe(true);
    }
    expect(isFinal('UNPAID')).toBe(false);
  });
});
