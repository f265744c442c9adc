import { Prisma } from '@prisma/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countFakeRows, FAKE_EFFECT_INVARIANTS, invariantsFor } from '../../../dev/fakes/invariants.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../../ops/invariants.js';
import { writeCheckedHistory, type CheckedHistory } from '../../helpers/checked-history.js';

/**
 * The fakes' effect checks against a real database: a history written by the real activities on
 * the fakes passes, and each check fails when the effects it guards are corrupted (inside a
 * transaction that is rolled back).
 */
let h: CheckedHistory;

beforeAll(async () => {
  h = await writeCheckedHistory();
});
afterAll(async () => {
  await h?.database.drop();
});

const sql = Prisma.sql;
/** One corruption per check: an effect missing where it is owed, or present where it is not. */
function corruptions({ orders, payments }: CheckedHistory): Record<string, Prisma.Sql> {
  return {
    'payment-closed-before-order': sql`
      INSERT INTO fakes.payment_intents (payment_id, order_id, amount_cents, currency, client_secret, state, cancelled_at)
      SELECT 'pi_late_close', id, total_cents, 'eur', 'secret', 'CANCELLED', cancelled_at + interval '1 minute'
        FROM orders WHERE id = ${orders.cancelled}::uuid`,
    'provider-payments-settled': sql`
      INSERT INTO fakes.payment_intents (payment_id, order_id, amount_cents, currency, client_secret, state, amount_received, paid_at)
      SELECT 'pi_never_recorded', id, total_cents, 'eur', 'secret', 'SUCCEEDED', total_cents, now() - interval '1 hour'
        FROM orders WHERE id = ${orders.unpaid}::uuid`,
    'cancellation-notified-once': sql`
      INSERT INTO fakes.effects (service, operation, idempotency_key, payload)
      VALUES ('notification', 'ORDER_CANCELLED', ${orders.paid} || ':ORDER_CANCELLED', '{}')`,
    // An unclaimed payment marked refunded that the provider never refunded.
    'unclaimed-refunded-once-at-provider': sql`
      INSERT INTO unclaimed_payments (payment_id, amount_cents, currency, livemode, status, refund_due_at, refund_ref, refunded_at)
      VALUES ('pi-unclaimed-never-refunded', 1500, 'eur', false, 'REFUNDED', now(), 'ref-made-up', now())`,
    'refunded-once-at-provider': sql`DELETE FROM fakes.effects WHERE operation = 'refund' AND idempotency_key = ${payments.refunded}`,
    'captured-never-refunded-at-provider': sql`
      INSERT INTO fakes.effects (service, operation, idempotency_key, payload) VALUES ('payments', 'refund', ${payments.captured}, '{}')`,
    'fulfillment-effect-once': sql`DELETE FROM fakes.effects WHERE service = 'invoice' AND idempotency_key = ${orders.paid} || ':INVOICE'`,
  };
}

describe("the fakes' effect checks", () => {
  it('pass on a history written by the real activities, and count the effects', async () => {
    const report = await checkInvariants(h.database.prisma, FAKE_EFFECT_INVARIANTS, { graceMs: 0 });
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(await countFakeRows(h.database.prisma)).toEqual({ fulfillmentEffects: 3, repeatedCalls: 0 });
  });

  it('have a corruption case each', () => {
    expect(Object.keys(corruptions(h)).sort()).toEqual(FAKE_EFFECT_INVARIANTS.map((i) => i.name).sort());
  });

  it.each(FAKE_EFFECT_INVARIANTS.map((i) => i.name))('%s fails when its effects are corrupted', async (name) => {
    const report = await h.checkCorrupted(FAKE_EFFECT_INVARIANTS, corruptions(h)[name]!);
    expect(report.ok).toBe(false);
    expect(
      report.results.find((r) => r.invariant === name)?.violations,
      JSON.stringify(report.violations),
    ).toBeGreaterThan(0);
  });

  it('give a fresh cancellation its grace before its notice is owed', async () => {
    const cancelled = (ago: Prisma.Sql) => sql`
      UPDATE orders SET status = 'CANCELLED', cancelled_at = now() - ${ago}, cancel_reason = 'CUSTOMER' WHERE id = ${h.orders.unpaid}::uuid`;
    expect(
      (await h.checkCorrupted(FAKE_EFFECT_INVARIANTS, cancelled(sql`interval '0 seconds'`), 60_000)).violations,
    ).toEqual([]);
    const strict = await h.checkCorrupted(FAKE_EFFECT_INVARIANTS, cancelled(sql`interval '1 hour'`), 60_000);
    expect(strict.violations.map((v) => v.invariant).sort()).toEqual(['cancellation-notified-once']);
  });
});

describe('invariantsFor (npm run check)', () => {
  it("adds the fakes' checks where the database has their schema, and only there", async () => {
    expect(await invariantsFor(h.database.prisma)).toEqual({
      invariants: [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS],
      fakes: true,
    });
    await h.database.prisma
      .$transaction(async (tx) => {
        await tx.$executeRaw`DROP SCHEMA fakes CASCADE`;
        expect(await invariantsFor(tx)).toEqual({ invariants: BUSINESS_INVARIANTS, fakes: false });
        throw new Error('roll back');
      })
      .catch((err: Error) => {
        if (err.message !== 'roll back') throw err;
      });
  });
});
