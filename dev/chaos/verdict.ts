import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { isFinal, isOpen, type OrderStatus } from '../../domain/statuses.js';
import type { Db } from '../../lib/db.js';
import {
  BUSINESS_INVARIANTS,
  checkInvariants,
  countRows,
  formatCounts,
  formatReport,
  type Counts,
  type InvariantReport,
} from '../../ops/invariants.js';
import { countFakeRows, FAKE_EFFECT_INVARIANTS, formatFakeCounts, type FakeCounts } from '../fakes/invariants.js';
import { describeLatency, latencyStats } from './latency.js';
import { count, type Ledger } from './load.js';

/** Facts about what the service promised (201/202) against what the database and Temporal hold. */
export interface Facts {
  /** 201 orders that are not in the database. */
  missingOrders: number;
  /** 201 orders still open: UNPAID, or AWAITING_FUNDS. */
  unfinishedOrders: number;
  /** 202 payments that are not in the database. */
  missingPayments: number;
  /** Losing payments not refunded yet (REFUND_PENDING), anywhere in the database. */
  refundsPending: number;
  /** Fulfillment steps not done yet (PENDING), anywhere in the database. */
  stepsPending: number;
  /** Order and late-payment workflows that have not finished. */
  runningWorkflows: number;
  /** 202 payments that must never capture (wrong amount, or sent after the deadline) but did. */
  wronglyCaptured: number;
  /** Correct payments answered 202 before the deadline that were still refunded as too late. */
  onTimeJudgedLate: number;
  /** Final 201 orders that ended otherwise than their plan must (when the load says how each must end). */
  unexpectedOutcomes: number;
  /** How the 201 orders ended, by the payment plan the generator had for them: `on-time` → PAID 12, CANCELLED 3. */
  outcomes: Map<string, Map<string, number>>;
}

export interface Verdict {
  ok: boolean;
  lost: number;
  duplicated: number;
  facts: Facts;
  report: InvariantReport;
  counts: Counts;
  fakeCounts: FakeCounts;
  /** False: the bound ran out first; what was unfinished then counts as lost. */
  settled: boolean;
  settledInMs: number;
}

/** Chaos runs on the fakes: the business invariants and the fakes' effect checks both. */
const INVARIANTS = [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS];
/** Invariants whose violations the facts already count as lost: an order still UNPAID, a refund still pending. */
const COUNTED_AS_LOST = new Set(['no-unpaid-past-deadline', 'losing-payments-refunded']);
for (const name of COUNTED_AS_LOST)
  if (!INVARIANTS.some((i) => i.name === name)) throw new Error(`no invariant named ${name}`);

/**
 * Waits (bounded) until everything the load started has finished — every order final, every losing
 * payment refunded, every fulfillment step done, no workflow still running — then judges: the facts
 * give "lost", the invariant checker's other violations (grace 0: nothing may still be in flight)
 * "duplicated": effects where none were owed, or books that do not add up.
 */
export async function settleAndJudge(
  db: Db,
  temporal: Client,
  taskQueue: string,
  ledger: Ledger,
  boundMs: number,
  mustEndAs?: Readonly<Record<string, string>>,
): Promise<Verdict> {
  const started = Date.now();
  let lastProgress = started;
  for (;;) {
    const database = await readDatabase(db).catch(() => undefined);
    const facts =
      database &&
      (await gatherFacts(db, temporal, taskQueue, ledger, database.counts, mustEndAs).catch(() => undefined));
    const settled = facts && database && lostOf(facts) === 0 && facts.runningWorkflows === 0 && database.report.ok;
    const elapsed = Date.now() - started;
    if (settled || elapsed > boundMs) {
      if (!facts || !database) throw new Error(`could not read the database or Temporal for ${boundMs / 1000} s`);
      const lost = lostOf(facts);
      const duplicated = database.report.violations.filter((v) => !COUNTED_AS_LOST.has(v.invariant)).length;
      return {
        ok: !!settled && facts.wronglyCaptured === 0 && facts.unexpectedOutcomes === 0,
        lost,
        duplicated,
        facts,
        ...database,
        settled: !!settled,
        settledInMs: elapsed,
      };
    }
    if (Date.now() - lastProgress > 10_000) {
      lastProgress = Date.now();
      console.log(
        `   … settling (${Math.round(elapsed / 1000)} s): ${facts ? describeFacts(facts) : 'database or Temporal not answering'}`,
      );
    }
    await sleep(1_000);
  }
}

/** The checker's verdict (grace 0: nothing may still be in flight) and the row counts. */
async function readDatabase(db: Db): Promise<Pick<Verdict, 'report' | 'counts' | 'fakeCounts'>> {
  const report = await checkInvariants(db, INVARIANTS, { graceMs: 0 });
  return { report, counts: await countRows(db), fakeCounts: await countFakeRows(db) };
}

function lostOf(f: Facts): number {
  return f.missingOrders + f.unfinishedOrders + f.missingPayments + f.refundsPending + f.stepsPending;
}

async function gatherFacts(
  db: Db,
  temporal: Client,
  taskQueue: string,
  ledger: Ledger,
  counts: Counts,
  mustEndAs: Readonly<Record<string, string>> = {},
): Promise<Facts> {
  const orderIds = [...ledger.orders.keys()];
  const paymentIds = [...ledger.payments.keys()];
  const statuses = await db.$queryRaw<Array<{ id: string; status: string }>>`
    SELECT id::text, status::text FROM orders WHERE id = ANY(${orderIds}::uuid[])`;
  const outcomes = new Map<string, Map<string, number>>();
  let unexpectedOutcomes = 0;
  for (const { id, status } of statuses) {
    const plan = ledger.orders.get(id)!.plan;
    if (!outcomes.has(plan)) outcomes.set(plan, new Map());
    count(outcomes.get(plan)!, status);
    const expected = mustEndAs[plan];
    if (expected !== undefined && isFinal(status as OrderStatus) && status !== expected) unexpectedOutcomes++;
  }
  const recorded = await db.$queryRaw<Array<{ payment_id: string; status: string; refund_reason: string | null }>>`
    SELECT payment_id, status::text, refund_reason::text FROM payments WHERE payment_id = ANY(${paymentIds})`;
  const { count: runningWorkflows } = await temporal.workflow.count(
    `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"`,
  );
  let wronglyCaptured = 0;
  let onTimeJudgedLate = 0;
  for (const row of recorded) {
    const sent = ledger.payments.get(row.payment_id)!;
    if (row.status === 'CAPTURED' && (!sent.correctAmount || !sent.sentBeforeDeadline)) wronglyCaptured++;
    if (sent.answeredBeforeDeadline && sent.correctAmount && row.refund_reason === 'ORDER_NOT_PAYABLE')
      onTimeJudgedLate++;
  }
  return {
    missingOrders: orderIds.length - statuses.length,
    unfinishedOrders: statuses.filter((o) => isOpen(o.status as OrderStatus)).length,
    missingPayments: paymentIds.length - recorded.length,
    refundsPending: counts.refundPending,
    stepsPending: counts.fulfillmentPending,
    runningWorkflows,
    wronglyCaptured,
    onTimeJudgedLate,
    unexpectedOutcomes,
    outcomes,
  };
}

function describeFacts(f: Facts): string {
  return (
    `${f.unfinishedOrders} orders open, ${f.missingOrders} missing; ${f.missingPayments} payments missing, ` +
    `${f.refundsPending} refunds pending; ${f.stepsPending} fulfillment steps pending; ${f.runningWorkflows} workflows running`
  );
}

/** The lines printed after each fault. */
export function describeVerdict(name: string, ledger: Ledger, v: Verdict): string[] {
  const lines = [
    `   load: ${ledger.orders.size} orders created (201), ${ledger.payments.size} payments accepted (202)` +
      `; refused: ${formatMap(ledger.refused)}; unanswered (retried): ${formatMap(ledger.unanswered)}`,
    ...[...ledger.latencies].map(
      ([kind, samples]) => `   ${kind}: ${describeLatency(latencyStats(samples), 'answered')}`,
    ),
    `   orders by payment plan: ${[...v.facts.outcomes].map(([plan, by]) => `${plan} → ${formatMap(by)}`).join('; ')}`,
    `   ${v.settled ? 'settled in' : 'NOT settled within'} ${(v.settledInMs / 1000).toFixed(1)} s; ${describeFacts(v.facts)}`,
    `   database: ${formatCounts(v.counts)}; ${formatFakeCounts(v.fakeCounts)}`,
    v.report.ok
      ? `   checker: all ${v.report.results.length} invariants PASS`
      : formatReport(v.report, 3)
          .filter((l) => !l.startsWith('PASS'))
          .map((l) => `   ${l}`)
          .join('\n'),
  ];
  if (v.facts.wronglyCaptured > 0)
    lines.push(`   FAIL: ${v.facts.wronglyCaptured} wrong-amount or late payments were captured`);
  if (v.facts.unexpectedOutcomes > 0)
    lines.push(
      `   FAIL: ${v.facts.unexpectedOutcomes} orders ended otherwise than their plan must (see by payment plan)`,
    );
  if (v.facts.onTimeJudgedLate > 0) {
    lines.push(
      `   note: ${v.facts.onTimeJudgedLate} correct payments answered 202 before the deadline were settled after it and refunded (ORDER_NOT_PAYABLE)`,
    );
  }
  lines.push(
    `${name}: ${v.lost} lost, ${v.duplicated} duplicated — checker ${v.report.ok ? 'PASS' : 'FAIL'}${v.ok ? '' : ' — FAILED'}`,
  );
  return lines;
}

function formatMap(map: Map<string, number>): string {
  return map.size === 0 ? 'none' : [...map].map(([k, n]) => `${k} ${n}`).join(', ');
}
