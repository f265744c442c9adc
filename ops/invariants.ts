import { Prisma } from '@prisma/client';
import { ORDER_EVENT_TYPES } from '../domain/order-events.js';
import type { Db } from '../lib/db.js';

/**
 * What must hold in the service's own tables whatever crashed, restarted or arrived twice, in any
 * deployment: stock adds up, every order reached one final state with its compensation done, every
 * losing payment was refunded, coupons and fulfillment steps follow their orders, and the outbox
 * holds exactly the events of the changes made, numbered without gaps. What the third
 * parties did is in their own records, not here; where the local fakes stand in for them,
 * dev/fakes/invariants.ts checks those effects too.
 * Each invariant is one SQL query (one snapshot) that returns a line per violation. `graceMs` is how
 * long asynchronous work (a timer firing, a compensation, a refund) may take before its absence
 * counts as a violation.
 */
export interface Invariant {
  name: string;
  description: string;
  /** Rows `{ detail }`, one per violation; `cutoff` is the SQL for `now() - grace`. */
  query(cutoff: Prisma.Sql): Prisma.Sql;
}

/** SKUs whose `column` (reserved or sold) differs from the units in the items of the orders `holding` selects. */
function unitsMatchOrders(column: 'reserved' | 'sold', holding: Prisma.Sql): Prisma.Sql {
  const units = Prisma.raw(`p.${column}`);
  return Prisma.sql`
    SELECT format('%s: %s %s but its orders hold %s', p.sku, ${column}::text, ${units}, COALESCE(h.held, 0)) AS detail
      FROM products p
      LEFT JOIN (SELECT i.sku, sum(i.quantity)::int AS held FROM order_items i JOIN orders o ON o.id = i.order_id
                  WHERE ${holding} GROUP BY i.sku) h ON h.sku = p.sku
     WHERE ${units} <> COALESCE(h.held, 0)`;
}

export const BUSINESS_INVARIANTS: readonly Invariant[] = [
  {
    name: 'stock-adds-up',
    description: 'for every SKU: stock_added = available + reserved + sold, none negative',
    query: () => Prisma.sql`
      SELECT format('%s: stock_added %s <> available %s + reserved %s + sold %s', sku, stock_added, available, reserved, sold) AS detail
        FROM products
       WHERE stock_added <> available + reserved + sold OR available < 0 OR reserved < 0 OR sold < 0`,
  },
  {
    // The guarded cancel gives an order's units back in its own statement: a cancelled order holds none.
    // An order awaiting funds holds its units as an unpaid one does: its payment is on its way.
    name: 'reserved-matches-unpaid-orders',
    description: "reserved = Σ items of the SKU's UNPAID and AWAITING_FUNDS orders",
    query: () => unitsMatchOrders('reserved', Prisma.sql`o.status IN ('UNPAID', 'AWAITING_FUNDS')`),
  },
  {
    name: 'sold-matches-paid-orders',
    description: "sold = Σ items of the SKU's PAID orders",
    query: () => unitsMatchOrders('sold', Prisma.sql`o.status = 'PAID'`),
  },
  {
    name: 'order-status-matches-timestamps',
    description:
      'never both paid_at and cancelled_at; UNPAID and AWAITING_FUNDS have neither, PAID has paid_at, CANCELLED has cancelled_at and a reason',
    query: () => Prisma.sql`
      SELECT format('order %s: %s with paid_at %L, cancelled_at %L, cancel_reason %L',
                    id, status, paid_at, cancelled_at, cancel_reason) AS detail
        FROM orders
       WHERE NOT ((status IN ('UNPAID', 'AWAITING_FUNDS') AND paid_at IS NULL AND cancelled_at IS NULL AND cancel_reason IS NULL)
               OR (status = 'PAID' AND paid_at IS NOT NULL AND cancelled_at IS NULL AND cancel_reason IS NULL)
               OR (status = 'CANCELLED' AND cancelled_at IS NOT NULL AND paid_at IS NULL AND cancel_reason IS NOT NULL))`,
  },
  {
    name: 'no-unpaid-past-deadline',
    description: 'no order is still UNPAID after expires_at + grace',
    query: (cutoff) => Prisma.sql`
      SELECT format('order %s: UNPAID, expired at %s', id, expires_at) AS detail
        FROM orders WHERE status = 'UNPAID' AND expires_at < ${cutoff}`,
  },
  {
    name: 'losing-payments-refunded',
    description:
      'every payment with a refund_reason is REFUNDED after grace; every payment without one is CAPTURED (or, within grace, still RECEIVED: recorded by the webhook, not yet decided)',
    query: (cutoff) => Prisma.sql`
      SELECT format('payment %s (order %s): %s, refund_reason %L, received %s', payment_id, order_id, status, refund_reason, received_at) AS detail
        FROM payments
       WHERE (refund_reason IS NOT NULL AND status <> 'REFUNDED' AND received_at < ${cutoff})
          OR (refund_reason IS NULL AND status <> 'CAPTURED' AND NOT (status = 'RECEIVED' AND received_at >= ${cutoff}))`,
  },
  {
    name: 'refunded-once',
    description: 'a REFUNDED payment has exactly one refunds row, for its amount; a pending one has none yet',
    query: () => Prisma.sql`
      SELECT format('payment %s (%s, %s cents): %s refund rows (amounts %s)', p.payment_id, p.status, p.amount_cents, r.n, r.amounts) AS detail
        FROM payments p
        CROSS JOIN LATERAL (SELECT count(*)::int AS n, string_agg(amount_cents::text, ',') AS amounts,
                                   bool_and(amount_cents = p.amount_cents) AS exact
                              FROM refunds WHERE payment_id = p.payment_id) r
       WHERE (p.status = 'REFUNDED' AND (r.n <> 1 OR NOT r.exact))
          OR (p.status = 'REFUND_PENDING' AND r.n <> 0)`,
  },
  {
    name: 'captured-never-refunded',
    description: 'no CAPTURED payment has a refund reason or a refunds row',
    query: () => Prisma.sql`
      SELECT format('payment %s (order %s): CAPTURED but refund_reason %L, refunded by us %s',
                    p.payment_id, p.order_id, p.refund_reason, r.payment_id IS NOT NULL) AS detail
        FROM payments p
        LEFT JOIN refunds r ON r.payment_id = p.payment_id
       WHERE p.status = 'CAPTURED' AND (p.refund_reason IS NOT NULL OR r.payment_id IS NOT NULL)`,
  },
  {
    name: 'only-own-money-captured',
    description:
      "no CAPTURED payment was refused as not the order's own money, nor is in another currency than its order",
    query: () => Prisma.sql`
      SELECT format('payment %s (order %s): CAPTURED, refusal %L, currency %L for an order in %L',
                    p.payment_id, p.order_id, p.refusal, p.currency, o.currency) AS detail
        FROM payments p JOIN orders o ON o.id = p.order_id
       WHERE p.status = 'CAPTURED' AND (p.refusal IS NOT NULL OR p.currency <> o.currency)`,
  },
  {
    name: 'unclaimed-money-accounted',
    description:
      'money taken for no order of ours is refunded once its grace has passed (REFUNDED, with its refund), or held for an operator (REFUND_FAILED, with the error)',
    query: (cutoff) => Prisma.sql`
      SELECT format('unclaimed payment %s (%s %s): %s, refund due %s, refund %L, error %L', payment_id, amount_cents,
                    currency, status, refund_due_at, refund_ref, refund_error) AS detail
        FROM unclaimed_payments
       WHERE (status = 'HELD' AND refund_due_at < ${cutoff})
          OR (status = 'REFUNDED' AND (refund_ref IS NULL OR refunded_at IS NULL))
          OR (status = 'REFUND_FAILED' AND refund_error IS NULL)`,
  },
  {
    name: 'paid-order-one-captured-payment',
    description:
      'each PAID order has exactly one CAPTURED payment, for its total (none if its total is 0: paid at placement); no other order has one',
    query: () => Prisma.sql`
      SELECT format('order %s (%s, total %s): %s captured payments (amounts %s)',
                    o.id, o.status, o.total_cents, count(p.payment_id), string_agg(p.amount_cents::text, ',')) AS detail
        FROM orders o
        LEFT JOIN payments p ON p.order_id = o.id AND p.status = 'CAPTURED'
       GROUP BY o.id, o.status, o.total_cents
      HAVING CASE WHEN o.status = 'PAID' AND o.total_cents > 0 THEN count(p.payment_id) <> 1 OR bool_or(p.amount_cents <> o.total_cents)
                  ELSE count(p.payment_id) > 0 END`,
  },
  {
    name: 'coupon-locked-only-by-unpaid-order',
    description: 'a LOCKED coupon belongs to an UNPAID or AWAITING_FUNDS order (or one cancelled within grace)',
    query: (cutoff) => Prisma.sql`
      SELECT format('coupon %s: LOCKED by order %L, which is %s', c.code, c.order_id, COALESCE(o.status::text, 'missing')) AS detail
        FROM coupons c LEFT JOIN orders o ON o.id = c.order_id
       WHERE c.status = 'LOCKED' AND (o.id IS NULL OR o.status = 'PAID' OR (o.status = 'CANCELLED' AND o.cancelled_at < ${cutoff}))`,
  },
  {
    name: 'coupon-redeemed-only-by-paid-order',
    description: 'a REDEEMED coupon belongs to a PAID order, and a PAID order with a coupon redeemed it',
    query: () => Prisma.sql`
      SELECT format('coupon %s: REDEEMED by order %L, which is %s', c.code, c.order_id, COALESCE(o.status::text, 'missing')) AS detail
        FROM coupons c LEFT JOIN orders o ON o.id = c.order_id
       WHERE c.status = 'REDEEMED' AND (o.id IS NULL OR o.status <> 'PAID')
      UNION ALL
      SELECT format('order %s: PAID with coupon %s, which is %L for order %L', o.id, o.coupon_code, c.status, c.order_id)
        FROM orders o LEFT JOIN coupons c ON c.code = o.coupon_code
       WHERE o.status = 'PAID' AND o.coupon_code IS NOT NULL AND (c.status IS DISTINCT FROM 'REDEEMED' OR c.order_id IS DISTINCT FROM o.id)`,
  },
  {
    // Placement locks a customer's coupon only for that customer's order, and its customer cannot change while it is held or used.
    name: 'coupon-used-by-its-customer',
    description: 'a coupon bound to a customer is LOCKED or REDEEMED only by an order of that customer',
    query: () => Prisma.sql`
      SELECT format('coupon %s: for customer %s, but %s by order %s of customer %s', c.code, c.customer_id, c.status, o.id, o.customer_id) AS detail
        FROM coupons c JOIN orders o ON o.id = c.order_id
       WHERE c.customer_id IS NOT NULL AND c.status IN ('LOCKED', 'REDEEMED') AND o.customer_id <> c.customer_id`,
  },
  {
    name: 'fulfillment-steps-owed',
    description: 'each PAID order has its three fulfillment steps; no other order has any',
    query: () => Prisma.sql`
      SELECT format('order %s (%s): %s fulfillment steps', o.id, o.status, count(s.step)) AS detail
        FROM orders o LEFT JOIN fulfillment_steps s ON s.order_id = o.id
       GROUP BY o.id, o.status
      HAVING count(s.step) <> CASE WHEN o.status = 'PAID' THEN 3 ELSE 0 END`,
  },
  {
    // Each event's statement bumps its order's counter and takes the new value as its seq.
    name: 'order-events-numbered-without-gaps',
    description: "each order's events are numbered 1, 2, … up to its event_seq, without a gap",
    query: () => Prisma.sql`
      SELECT format('order %s: event_seq %s, events numbered %L', o.id, o.event_seq,
                    string_agg(e.seq::text, ',' ORDER BY e.seq)) AS detail
        FROM orders o LEFT JOIN order_events e ON e.order_id = o.id
       GROUP BY o.id, o.event_seq
      HAVING count(e.seq) <> o.event_seq OR COALESCE(min(e.seq), 1) <> 1 OR COALESCE(max(e.seq), 0) <> o.event_seq`,
  },
  {
    // The event is written by the statement of its change: a change without it was made another way.
    name: 'order-changes-have-events',
    description:
      'every order has its order.placed (seq 1); a PAID, CANCELLED or AWAITING_FUNDS order its event, a reminded one its order.payment_reminder; a REFUNDED or REFUND_FAILED payment and a DONE or FAILED fulfillment step their last event',
    query: () => Prisma.sql`
      SELECT format('order %s (%s): events %L', o.id, o.status, string_agg(e.seq || ' ' || e.type, ', ' ORDER BY e.seq)) AS detail
        FROM orders o LEFT JOIN order_events e ON e.order_id = o.id
       GROUP BY o.id, o.status, o.reminded_at
      HAVING count(*) FILTER (WHERE e.type = 'order.placed' AND e.seq = 1) = 0
          OR (o.status = 'PAID' AND count(*) FILTER (WHERE e.type = 'order.paid') = 0)
          OR (o.status = 'CANCELLED' AND count(*) FILTER (WHERE e.type = 'order.cancelled') = 0)
          OR (o.status = 'AWAITING_FUNDS' AND count(*) FILTER (WHERE e.type = 'order.awaiting_funds') = 0)
          OR (o.reminded_at IS NOT NULL AND count(*) FILTER (WHERE e.type = 'order.payment_reminder') = 0)
      UNION ALL
      SELECT format('payment %s (order %s): %s, its last refund event %L', p.payment_id, p.order_id, p.status, e.type)
        FROM payments p LEFT JOIN LATERAL (${lastRefundEvent(Prisma.sql`p`)}) e ON true
       WHERE (p.status = 'REFUNDED' AND e.type IS DISTINCT FROM 'order.refunded')
          OR (p.status = 'REFUND_FAILED' AND e.type IS DISTINCT FROM 'order.refund_failed')
      UNION ALL
      SELECT format('order %s: step %s %s, its last event %L', s.order_id, s.step, s.status, e.type)
        FROM fulfillment_steps s LEFT JOIN LATERAL (${lastStepEvent(Prisma.sql`s`)}) e ON true
       WHERE (s.status = 'DONE' AND e.type IS DISTINCT FROM 'order.fulfillment_step_done')
          OR (s.status = 'FAILED' AND e.type IS DISTINCT FROM 'order.fulfillment_step_dead_lettered')`,
  },
  {
    name: 'order-events-have-changes',
    description:
      'every event is of a known type, of an order that made its change: placed, paid, cancelled, awaiting funds and the payment reminder once each and only in a status they lead to (a reminder only for an order reminded); refunds and steps only for a payment or step of the order that made the move',
    query: () => Prisma.sql`
      SELECT format('event %s (order %s, seq %s): %L', e.id, e.order_id, e.seq, e.type) AS detail
        FROM order_events e LEFT JOIN orders o ON o.id = e.order_id
       WHERE o.id IS NULL OR e.type <> ALL(${[...ORDER_EVENT_TYPES]}::text[])
      UNION ALL
      SELECT format('order %s (%s): %s × %s', o.id, o.status, count(*), e.type)
        FROM order_events e JOIN orders o ON o.id = e.order_id
       WHERE e.type IN ('order.placed', 'order.paid', 'order.cancelled', 'order.awaiting_funds', 'order.payment_reminder')
       GROUP BY o.id, o.status, o.reminded_at, e.type
      HAVING count(*) > 1
          OR (e.type = 'order.paid' AND o.status <> 'PAID')
          OR (e.type = 'order.cancelled' AND o.status <> 'CANCELLED')
          OR (e.type = 'order.awaiting_funds' AND o.status = 'UNPAID')
          OR (e.type = 'order.payment_reminder' AND o.reminded_at IS NULL)
      UNION ALL
      SELECT format('event %s (order %s): %s of payment %L, which is not one of the order owed back', e.id, e.order_id, e.type, e.data->>'paymentId')
        FROM order_events e LEFT JOIN payments p ON p.payment_id = e.data->>'paymentId' AND p.order_id = e.order_id
       WHERE e.type IN ('order.refunded', 'order.refund_failed') AND (p.payment_id IS NULL OR p.status IN ('RECEIVED', 'CAPTURED'))
      UNION ALL
      SELECT format('payment %s (order %s): %s, but its last refund event is %L', p.payment_id, p.order_id, p.status, e.type)
        FROM payments p JOIN LATERAL (${lastRefundEvent(Prisma.sql`p`)}) e ON true
       WHERE p.status = 'REFUND_PENDING' AND e.type = 'order.refunded'
      UNION ALL
      SELECT format('event %s (order %s): %s of step %L, which the order does not have', e.id, e.order_id, e.type, e.data->>'step')
        FROM order_events e LEFT JOIN fulfillment_steps s ON s.order_id = e.order_id AND lower(s.step::text) = e.data->>'step'
       WHERE e.type IN ('order.fulfillment_step_done', 'order.fulfillment_step_dead_lettered') AND s.order_id IS NULL
      UNION ALL
      SELECT format('order %s: step %s %s, with %s × done, its last event %L', s.order_id, s.step, s.status, e.done, e.type)
        FROM fulfillment_steps s JOIN LATERAL (
               SELECT (${lastStepEvent(Prisma.sql`s`)}) AS type,
                      (SELECT count(*) FROM order_events WHERE order_id = s.order_id AND type = 'order.fulfillment_step_done'
                          AND data->>'step' = lower(s.step::text)) AS done) e ON true
       WHERE e.done > 1 OR (s.status <> 'DONE' AND e.type = 'order.fulfillment_step_done')`,
  },
];

/** The type of the last refund event (made or failed) of payment `p`, as a subquery. */
function lastRefundEvent(p: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT type FROM order_events
     WHERE order_id = ${p}.order_id AND type IN ('order.refunded', 'order.refund_failed') AND data->>'paymentId' = ${p}.payment_id
     ORDER BY seq DESC LIMIT 1`;
}

/** The type of the last event (done or dead-lettered) of fulfillment step `s`, as a subquery; events name a step in lower case. */
function lastStepEvent(s: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT type FROM order_events
     WHERE order_id = ${s}.order_id AND type IN ('order.fulfillment_step_done', 'order.fulfillment_step_dead_lettered')
       AND data->>'step' = lower(${s}.step::text)
     ORDER BY seq DESC LIMIT 1`;
}

export interface InvariantResult {
  invariant: string;
  description: string;
  violations: number;
}

export interface InvariantReport {
  ok: boolean;
  /** Every invariant checked, with its number of violations, in the order given. */
  results: InvariantResult[];
  violations: Array<{ invariant: string; detail: string }>;
}

/** The checker only reads: a client or a transaction (tests corrupt data inside one and roll it back). */
export type Queryable = Pick<Db, '$queryRaw'>;

/** Runs `invariants` (the business ones, to which a dev database adds the fakes' own) over `db`. */
export async function checkInvariants(
  db: Queryable,
  invariants: readonly Invariant[],
  options: { graceMs: number },
): Promise<InvariantReport> {
  const cutoff = Prisma.sql`now() - ${options.graceMs} * interval '1 millisecond'`;
  const violations: InvariantReport['violations'] = [];
  const results: InvariantResult[] = [];
  // One after another: each is one statement, so each judges one consistent snapshot.
  for (const invariant of invariants) {
    const rows = await db.$queryRaw<Array<{ detail: string }>>(invariant.query(cutoff));
    results.push({ invariant: invariant.name, description: invariant.description, violations: rows.length });
    violations.push(...rows.map(({ detail }) => ({ invariant: invariant.name, detail })));
  }
  return { ok: violations.length === 0, results, violations };
}

export interface Counts {
  orders: number;
  unpaid: number;
  awaitingFunds: number;
  paid: number;
  cancelled: number;
  payments: number;
  captured: number;
  refundPending: number;
  refunded: number;
  refunds: number;
  fulfillmentPending: number;
  fulfillmentFailed: number;
}

export async function countRows(db: Queryable): Promise<Counts> {
  const [row] = await db.$queryRaw<[Counts]>`
    SELECT (SELECT count(*) FROM orders)::int AS "orders",
           (SELECT count(*) FROM orders WHERE status = 'UNPAID')::int AS "unpaid",
           (SELECT count(*) FROM orders WHERE status = 'AWAITING_FUNDS')::int AS "awaitingFunds",
           (SELECT count(*) FROM orders WHERE status = 'PAID')::int AS "paid",
           (SELECT count(*) FROM orders WHERE status = 'CANCELLED')::int AS "cancelled",
           (SELECT count(*) FROM payments)::int AS "payments",
           (SELECT count(*) FROM payments WHERE status = 'CAPTURED')::int AS "captured",
           (SELECT count(*) FROM payments WHERE status = 'REFUND_PENDING')::int AS "refundPending",
           (SELECT count(*) FROM payments WHERE status = 'REFUNDED')::int AS "refunded",
           (SELECT count(*) FROM refunds)::int AS "refunds",
           (SELECT count(*) FROM fulfillment_steps WHERE status = 'PENDING')::int AS "fulfillmentPending",
           (SELECT count(*) FROM fulfillment_steps WHERE status = 'FAILED')::int AS "fulfillmentFailed"`;
  return row;
}

/** The checker's verdict as lines: one per invariant (PASS/FAIL), the first violations of each. */
export function formatReport(report: InvariantReport, maxDetails = 5): string[] {
  const lines: string[] = [];
  for (const r of report.results) {
    lines.push(
      `${r.violations === 0 ? 'PASS' : 'FAIL'}  ${r.invariant.padEnd(36)} ${r.violations === 0 ? r.description : `${r.violations} violation(s)`}`,
    );
    const details = report.violations.filter((v) => v.invariant === r.invariant);
    for (const v of details.slice(0, maxDetails)) lines.push(`        ${v.detail}`);
    if (details.length > maxDetails) lines.push(`        … and ${details.length - maxDetails} more`);
  }
  return lines;
}

export function formatCounts(c: Counts): string {
  return (
    `orders ${c.orders} (paid ${c.paid}, cancelled ${c.cancelled}, unpaid ${c.unpaid}, awaiting funds ${c.awaitingFunds}); ` +
    `payments ${c.payments} (captured ${c.captured}, refunded ${c.refunded}, refund pending ${c.refundPending}); refunds ${c.refunds}; ` +
    `fulfillment steps pending ${c.fulfillmentPending}, failed ${c.fulfillmentFailed}`
  );
}
