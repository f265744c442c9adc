import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { Prisma } from '@prisma/client';
import type { Db } from '../../lib/db.js';
import { query } from '../../lib/sql.js';
import { THIRD_PARTY_FAILURES } from '../../domain/errors.js';

export const FAKE_SERVICES = ['payments', 'invoice', 'notification', 'loyalty'] as const;
export type FakeService = (typeof FAKE_SERVICES)[number];

export interface FaultSpec {
  failNext?: number | undefined;
  failAlways?: boolean | undefined;
  latencyMs?: number | undefined;
}

export interface Fault {
  service: FakeService;
  failNext: number;
  failAlways: boolean;
  latencyMs: number;
}

/**
 * Injected failures for the local fakes, kept in the database (fakes.faults) so the API (which sets
 * them) and the worker (whose fakes obey them) agree, whichever processes they run in. They fail
 * the way the adapter contract says a provider's failure is reported (adapters/ports/).
 */
export class FakeFaults {
  constructor(private readonly db: Db) {}

  /** Sets the given fields; the others keep their value (their default for a new row). */
  async set(service: FakeService, spec: FaultSpec): Promise<Fault> {
    const { failNext = null, failAlways = null, latencyMs = null } = spec;
    const [row] = await this.db.$queryRaw<[Fault]>`
      INSERT INTO fakes.faults AS f (service, fail_next, fail_always, latency_ms)
      VALUES (${service}, COALESCE(${failNext}::int, 0), COALESCE(${failAlways}::boolean, false), COALESCE(${latencyMs}::int, 0))
      ON CONFLICT (service) DO UPDATE
         SET fail_next = COALESCE(${failNext}::int, f.fail_next),
             fail_always = COALESCE(${failAlways}::boolean, f.fail_always),
             latency_ms = COALESCE(${latencyMs}::int, f.latency_ms)
      RETURNING service, fail_next AS "failNext", fail_always AS "failAlways", latency_ms AS "latencyMs"`;
    return row;
  }

  async clear(service: FakeService): Promise<void> {
    await this.db.$executeRaw`DELETE FROM fakes.faults WHERE service = ${service}`;
  }

  /** Waits the injected latency, then throws if this call is meant to fail. */
  async apply(service: FakeService): Promise<void> {
    const {
      rows: [fault],
    } = await query<Pick<Fault, 'failAlways' | 'latencyMs'>>(
      this.db.pool,
      Prisma.sql`SELECT fail_always AS "failAlways", latency_ms AS "latencyMs" FROM fakes.faults WHERE service = ${service}`,
    );
    if (!fault) return;
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    if (fault.failAlways) {
      throw ApplicationFailure.nonRetryable(
        `${service} rejected the call (injected failAlways)`,
        THIRD_PARTY_FAILURES.rejected,
      );
    }
    // Decrement-if-positive in one statement: concurrent calls consume exactly N failures.
    const { rowCount: consumed } = await query(
      this.db.pool,
      Prisma.sql`UPDATE fakes.faults SET fail_next = fail_next - 1 WHERE service = ${service} AND fail_next > 0`,
    );
    if (consumed === 1) {
      throw ApplicationFailure.retryable(
        `${service} is unavailable (injected failNext)`,
        THIRD_PARTY_FAILURES.unavailable,
      );
    }
  }
}
