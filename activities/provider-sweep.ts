import { Prisma } from '@prisma/client';
import { Context, getClient, log } from '@temporalio/activity';
import type { ProviderSweepInput } from '../domain/messages.js';
import { acceptProviderEvent, type IntakeDeps } from '../handover/provider-events.js';
import { query } from '../lib/sql.js';
import type { ActivityDeps } from './deps.js';

export interface ProviderSweepResult {
  /** Events the provider listed in this sweep, acted on or not. */
  listed: number;
  /** Payments of orders of ours fed through the webhook's path (one recorded already is fed again to no new effect). */
  paymentsFed: string[];
  /** Payments whose refund failure was fed, to be held for an operator (again, to no new effect). */
  refundFailuresFed: string[];
  /** Unclaimed payments (money for no order of ours) this sweep recorded, to be refunded after their grace. */
  unclaimedRecorded: string[];
  /** This sweep ended a pass over the window: the next one starts a new pass, from later. */
  passEnded: boolean;
}

/** Stripe's largest page. */
const PAGE_SIZE = 100;
/** Pages a sweep reads at most; after a webhook outage, a backlog drains at this pace per period. */
const PAGES_PER_SWEEP = 10;
/** A sweep starts no new page after this share of its start-to-close timeout. */
const TIME_BUDGET_SHARE = 0.5;
/**
 * How far before the last pass began the next one looks again: events a provider lists a little
 * after their time (and a provider's clock a little off ours) are still read. An event in that
 * overlap is fed again, which changes nothing.
 */
const OVERLAP_MS = 5 * 60_000;
/**
 * Where the very first sweep starts: Stripe retries a webhook for up to three days, so an event
 * older than that was delivered or given up on long before this service could have waited for it.
 */
const FIRST_LOOKBACK_MS = 3 * 24 * 3_600_000;

const CURSOR_ID = 'provider-events';

interface Cursor {
  createdSince: Date;
  startingAfter: string | null;
  passStartedAt: Date | null;
}

export function createProviderSweepActivities(deps: ActivityDeps) {
  const { db, paymentProvider } = deps;

  async function readCursor(): Promise<Cursor> {
    const { rows } = await query<{ created_since: Date; starting_after: string | null; pass_started_at: Date | null }>(
      db.pool,
      Prisma.sql`
        WITH first AS (
          INSERT INTO provider_event_cursor (id, created_since, updated_at)
          VALUES (${CURSOR_ID}, now() - ${FIRST_LOOKBACK_MS} * interval '1 millisecond', now())
          ON CONFLICT (id) DO NOTHING
          RETURNING created_since, starting_after, pass_started_at)
        SELECT created_since, starting_after, pass_started_at FROM first
        UNION ALL
        SELECT created_since, starting_after, pass_started_at FROM provider_event_cursor WHERE id = ${CURSOR_ID}`,
    );
    const row = rows[0]!;
    return { createdSince: row.created_since, startingAfter: row.starting_after, passStartedAt: row.pass_started_at };
  }

  async function writeCursor(cursor: Cursor): Promise<void> {
    await query(
      db.pool,
      Prisma.sql`
        UPDATE provider_event_cursor
        SET created_since = ${cursor.createdSince}, starting_after = ${cursor.startingAfter},
            pass_started_at = ${cursor.passStartedAt}, updated_at = now()
        WHERE id = ${CURSOR_ID}`,
    );
  }

  async function databaseNow(): Promise<Date> {
    const { rows } = await query<{ now: Date }>(db.pool, Prisma.sql`SELECT now() AS now`);
    return rows[0]!.now;
  }

  return {
    /**
     * Reads the provider's recent events that its webhook may not have delivered and feeds each
     * through the webhook's own path (handover/provider-events.ts): a payment taken whose webhook
     * was lost pays its order within one sweep period, not at its deadline; a refund failure never
     * delivered is held for an operator. Feeding an event the webhook delivered too changes
     * nothing (the first record stays, Temporal drops a second notice).
     *
     * A pass reads the window (events created at or after the cursor) newest first, a page at a
     * time, and keeps its place after every page, so a pass cut short by the page limit or the time
     * budget goes on in the next sweep. A pass that reached the oldest event moves the window up
     * to just before the time it began: every event older was listed by then.
     */
    async sweepProviderEvents(input: ProviderSweepInput): Promise<ProviderSweepResult> {
      const started = Date.now();
      const budgetMs = TIME_BUDGET_SHARE * Context.current().info.startToCloseTimeoutMs;
      // Set when the event fed last recorded money for no order of ours: counted once, when first
      // recorded, since one fed again is not recorded again.
      let recordedUnclaimed = false;
      const intake: IntakeDeps = {
        db,
        temporal: getClient(),
        taskQueue: input.taskQueue,
        logger: {
          info: (context, message) => log.info(message, { ...context }),
          warn: (context, message) => log.warn(message, { ...context }),
        },
        paymentAccount: deps.paymentAccount,
        unclaimedRefundGraceMs: deps.unclaimedRefundGraceMs,
        metrics: { unclaimedPayments: { inc: () => (recordedUnclaimed = true) } },
        clock: deps.clock,
      };
      const result: ProviderSweepResult = {
        listed: 0,
        paymentsFed: [],
        refundFailuresFed: [],
        unclaimedRecorded: [],
        passEnded: false,
      };
      let cursor = await readCursor();
      for (let page = 0; page < PAGES_PER_SWEEP && (page === 0 || Date.now() < started + budgetMs); page++) {
        const passStartedAt = cursor.passStartedAt ?? (await databaseNow());
        const listed = await paymentProvider.listEvents({
          createdSince: cursor.createdSince.toISOString(),
          startingAfter: cursor.startingAfter ?? undefined,
          limit: PAGE_SIZE,
        });
        result.listed += listed.events.length;
        for (const { event } of listed.events) {
          if (!event) continue;
          const outcome = await acceptProviderEvent(intake, event);
          if (recordedUnclaimed && event.type === 'payment_intent.succeeded')
            result.unclaimedRecorded.push(event.payment.paymentId);
          recordedUnclaimed = false;
          if (outcome === 'PAYMENT_ACCEPTED' && event.type === 'payment_intent.succeeded')
            result.paymentsFed.push(event.payment.paymentId);
          if (outcome === 'REFUND_FAILURE_ACCEPTED' && event.type === 'refund.failed')
            result.refundFailuresFed.push(event.refund.paymentId);
        }
        const last = listed.events.at(-1);
        if (listed.hasMore && last) {
          cursor = { ...cursor, startingAfter: last.eventId, passStartedAt };
        } else {
          const movedUp = new Date(passStartedAt.getTime() - OVERLAP_MS);
          cursor = {
            createdSince: movedUp > cursor.createdSince ? movedUp : cursor.createdSince,
            startingAfter: null,
            passStartedAt: null,
          };
          result.passEnded = true;
        }
        await writeCursor(cursor);
        if (result.passEnded) break;
      }
      if (result.paymentsFed.length + result.refundFailuresFed.length > 0)
        log.info('provider sweep fed events their webhook may have lost', {
          paymentIds: result.paymentsFed,
          refundFailures: result.refundFailuresFed,
        });
      return result;
    },
  };
}
