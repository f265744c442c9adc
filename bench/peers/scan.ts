import { Prisma } from '@prisma/client';
import { statusIn } from '../../store/guarded-sql.js';
import { cancelWithin } from '../../activities/orders.js';
import { inTransaction, query } from '../../lib/sql.js';
import { ORDER_TRANSITIONS } from '../../domain/statuses.js';
import type { DirectActivities } from '../direct-placement.js';
import { compensateExpired } from '../expiry.js';

/**
 * The baseline: the classic scan job this service replaces. Every `everyMs` it range-scans the
 * (status, expires_at) index for UNPAID orders past their deadline, claims a batch with
 * FOR UPDATE SKIP LOCKED (so two scanners never take the same rows), runs the service's own
 * guarded cancel with its stock and coupon release (cancelWithin, inside the claiming transaction)
 * on each, and after the commit compensates the winners inline with the same activities as the
 * workflow: what is owed after the cancel, and the notice. It sees only its own orders (customer-id prefix), so it never races the timers.
 */
export interface ScanCancellerStats {
  ticks: number;
  batches: number;
  cancelled: number;
  busyMs: number;
}

export function startScanCanceller(
  direct: DirectActivities,
  options: { everyMs: number; batch: number; prefix: string; compensationConcurrency: number },
) {
  const stats: ScanCancellerStats = { ticks: 0, batches: 0, cancelled: 0, busyMs: 0 };
  let stopped = false;
  let wake: (() => void) | undefined;

  async function claimAndCancel(): Promise<string[]> {
    return inTransaction(direct.db.pool, async (tx) => {
      const { rows: due } = await query<{ id: string }>(
        tx,
        Prisma.sql`
          SELECT id FROM orders
          WHERE ${statusIn('orders', ORDER_TRANSITIONS.cancel.from)} AND expires_at < now() AND customer_id LIKE ${`${options.prefix}%`}
          ORDER BY expires_at
          LIMIT ${options.batch}
          FOR UPDATE SKIP LOCKED`,
      );
      const won: string[] = [];
      for (const { id } of due) {
        const result = await cancelWithin(tx, { orderId: id, reason: 'PAYMENT_TIMEOUT' }, null);
        if (result.outcome === 'CANCELLED') won.push(id);
      }
      return won;
    });
  }

  async function tick(): Promise<void> {
    const began = Date.now();
    stats.ticks++;
    for (let batches = 0; batches < 1_000; batches++) {
      const won = await claimAndCancel();
      stats.batches++;
      stats.cancelled += won.length;
      for (let i = 0; i < won.length; i += options.compensationConcurrency) {
        const slice = won.slice(i, i + options.compensationConcurrency);
        await Promise.all(slice.map((id) => compensateExpired(direct, id)));
      }
      if (won.length < options.batch) break;
    }
    stats.busyMs += Date.now() - began;
  }

  const loop = (async () => {
    const start = Date.now();
    for (let k = 1; !stopped; k++) {
      const wait = start + k * options.everyMs - Date.now();
      if (wait > 0)
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, wait);
        });
      if (stopped) break;
      await tick().catch((err: unknown) => console.error(`scan canceller: ${(err as Error).message}`));
    }
  })();

  return {
    async stop(): Promise<ScanCancellerStats> {
      stopped = true;
      wake?.();
      await loop;
      return stats;
    },
  };
}
