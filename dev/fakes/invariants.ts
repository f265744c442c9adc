import { Prisma } from '@prisma/client';
import { BUSINESS_INVARIANTS, type Invariant, type Queryable } from '../../ops/invariants.js';
import { hasFakesSchema } from './schema.js';

/** The fakes' effects (service/operation) that stand for each fulfillment step. */
const STEP_EFFECTS = Prisma.sql`(VALUES ('INVOICE', 'invoice', 'issue'), ('NOTIFICATION', 'notification', 'PAYMENT_RECEIVED'),
                                        ('LOYALTY', 'loyalty', 'award')) AS k(step, service, operation)`;

/** Orders whose effect (service/operation, key `<orderId><keySuffix>`) is missing though cancelled, or there though not. */
function onceForEachCancelledOrder(
  cutoff: Prisma.Sql,
  service: string,
  operation: string,
  keySuffix: string,
): Prisma.Sql {
  return Prisma.sql`
    SELECT format('order %s (%s): %s %s/%s effects', o.id, o.status, count(e.idempotency_key), ${service}::text, ${operation}::text) AS detail
      FROM orders o
      LEFT JOIN fakes.effects e ON e.service = ${service} AND e.operation = ${operation} AND e.idempotency_key = o.id::text || ${keySuffix}
     WHERE o.status <> 'CANCELLED' OR o.cancelled_at < ${cutoff}
     GROUP BY o.id, o.status
    HAVING count(e.idempotency_key) <> CASE WHEN o.status = 'CANCELLED' THEN 1 ELSE 0 END`;
}

/**
 * What must hold between the service's tables and what the local fakes did (fakes.effects): every
 * effect on a third party exists where it is owed and nowhere else. Twice under the same key cannot
 * happen at all: the fakes, like real providers, act once per idempotency key (their primary key)
 * and count a repeated call as absorbed (`repeatedCalls`). Real providers keep this record on their
 * side, so these checks run only where the fakes do.
 */
export const FAKE_EFFECT_INVARIANTS: readonly Invariant[] = [
  {
    name: 'payment-closed-before-order',
    description: 'no order was cancelled before the provider cancelled its payment (provider first)',
    query: () => Prisma.sql`
      SELECT format('order %s: cancelled at %s, its payment %s cancelled at %s', o.id, o.cancelled_at, i.payment_id, i.cancelled_at) AS detail
        FROM fakes.payment_intents i JOIN orders o ON o.id = i.order_id
       WHERE i.state = 'CANCELLED' AND (o.status <> 'CANCELLED' OR i.cancelled_at > o.cancelled_at)`,
  },
  {
    name: 'provider-payments-settled',
    description:
      'every payment the provider took (older than grace) was recorded and settled: paid its order, or given back',
    query: (cutoff) => Prisma.sql`
      SELECT format('order %s: the provider took payment %s (%s cents), the service has it %s', i.order_id, i.payment_id,
                    i.amount_received, COALESCE(p.status::text, 'nowhere')) AS detail
        FROM fakes.payment_intents i LEFT JOIN payments p ON p.payment_id = i.payment_id
       WHERE i.state = 'SUCCEEDED' AND i.paid_at < ${cutoff} AND (p.status IS NULL OR p.status = 'RECEIVED')`,
  },
  {
    name: 'cancellation-notified-once',
    description: 'every CANCELLED order older than grace sent ORDER_CANCELLED; no other order sent it',
    query: (cutoff) => onceForEachCancelledOrder(cutoff, 'notification', 'ORDER_CANCELLED', ':ORDER_CANCELLED'),
  },
  {
    name: 'refunded-once-at-provider',
    description: 'the provider refunded each REFUNDED payment exactly once',
    query: () => Prisma.sql`
      SELECT format('payment %s (%s cents): REFUNDED, %s provider refunds', p.payment_id, p.amount_cents, count(e.idempotency_key)) AS detail
        FROM payments p
        LEFT JOIN fakes.effects e ON e.service = 'payments' AND e.operation = 'refund' AND e.idempotency_key = p.payment_id
       WHERE p.status = 'REFUNDED'
       GROUP BY p.payment_id, p.amount_cents
      HAVING count(e.idempotency_key) <> 1`,
  },
  {
    name: 'unclaimed-refunded-once-at-provider',
    description: 'the provider refunded each REFUNDED unclaimed payment exactly once, and no HELD one',
    query: () => Prisma.sql`
      SELECT format('unclaimed payment %s: %s, %s provider refunds', u.payment_id, u.status, count(e.idempotency_key)) AS detail
        FROM unclaimed_payments u
        LEFT JOIN fakes.effects e ON e.service = 'payments' AND e.operation = 'refund' AND e.idempotency_key = u.payment_id
       WHERE u.status IN ('REFUNDED', 'HELD')
       GROUP BY u.payment_id, u.status
      HAVING count(e.idempotency_key) <> CASE WHEN u.status = 'REFUNDED' THEN 1 ELSE 0 END`,
  },
  {
    name: 'captured-never-refunded-at-provider',
    description: 'the provider refunded no CAPTURED payment',
    query: () => Prisma.sql`
      SELECT format('payment %s (order %s): CAPTURED but refunded by the provider', p.payment_id, p.order_id) AS detail
        FROM payments p
        JOIN fakes.effects e ON e.service = 'payments' AND e.operation = 'refund' AND e.idempotency_key = p.payment_id
       WHERE p.status = 'CAPTURED'`,
  },
  {
    name: 'fulfillment-effect-once',
    description: 'each fulfillment effect belongs to a step of a paid order; every DONE step has its effect',
    query: () => Prisma.sql`
      WITH effects AS (
        SELECT k.step, e.idempotency_key AS key
          FROM fakes.effects e JOIN ${STEP_EFFECTS} ON k.service = e.service AND k.operation = e.operation)
      SELECT format('%s: step %L, effect %s', COALESCE(s.order_id::text || ':' || s.step::text, e.key),
                    s.status, CASE WHEN e.key IS NULL THEN 'missing' ELSE 'present' END) AS detail
        FROM fulfillment_steps s
        FULL JOIN effects e ON e.step = s.step::text AND e.key = s.order_id::text || ':' || s.step::text
       WHERE s.order_id IS NULL OR (s.status = 'DONE' AND e.key IS NULL)`,
  },
];

/** The invariants that apply to this database: the business ones, and the fakes' where it has their schema. */
export async function invariantsFor(db: Queryable): Promise<{ invariants: readonly Invariant[]; fakes: boolean }> {
  const fakes = await hasFakesSchema(db);
  return { invariants: fakes ? [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS] : BUSINESS_INVARIANTS, fakes };
}

export interface FakeCounts {
  /** Effects the fakes had for fulfillment steps (invoices, payment notices, loyalty awards). */
  fulfillmentEffects: number;
  /** Calls the fakes absorbed because their key had already acted: retries and redeliveries made harmless. */
  repeatedCalls: number;
}

export async function countFakeRows(db: Queryable): Promise<FakeCounts> {
  const [row] = await db.$queryRaw<[FakeCounts]>`
    SELECT (SELECT count(*) FROM fakes.effects e JOIN ${STEP_EFFECTS} ON k.service = e.service AND k.operation = e.operation)::int AS "fulfillmentEffects",
           (SELECT count(*) FROM fakes.calls WHERE outcome = 'REPEAT')::int AS "repeatedCalls"`;
  return row;
}

export function formatFakeCounts(c: FakeCounts): string {
  return `fulfillment effects ${c.fulfillmentEffects}; repeated calls absorbed ${c.repeatedCalls}`;
}
