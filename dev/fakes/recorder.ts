import { Prisma } from '@prisma/client';
import type { Db } from '../../lib/db.js';
import { query } from '../../lib/sql.js';
import type { FakeFaults, FakeService } from './faults.js';

type Outcome = 'EFFECT' | 'REPEAT' | 'FAILED';

/**
 * Durable memory of the local fakes. Like the real services they stand in for, a fake acts once
 * per idempotency key (fakes.effects: one row per key, a single atomic insert) and logs every call,
 * repeated or failed (fakes.calls), so tests and the checker can count both what we asked for and
 * what happened.
 */
export class FakeRecorder {
  constructor(
    private readonly db: Db,
    private readonly faults: FakeFaults,
  ) {}

  /** Returns true when this call had the effect, false when the key had already been used. */
  async record(service: FakeService, operation: string, idempotencyKey: string, payload: object): Promise<boolean> {
    try {
      await this.faults.apply(service);
    } catch (err) {
      await this.log(service, operation, idempotencyKey, 'FAILED');
      throw err;
    }
    // The effect and the call's log line in one statement: the call acted if its insert did.
    const effect: Outcome = 'EFFECT';
    const repeat: Outcome = 'REPEAT';
    const { rows } = await query<{ outcome: Outcome }>(
      this.db.pool,
      Prisma.sql`
        WITH acted AS (
          INSERT INTO fakes.effects (service, operation, idempotency_key, payload)
          VALUES (${service}, ${operation}, ${idempotencyKey}, ${JSON.stringify(payload)}::jsonb)
          ON CONFLICT DO NOTHING
          RETURNING 1)
        INSERT INTO fakes.calls (service, operation, idempotency_key, outcome)
        SELECT ${service}, ${operation}, ${idempotencyKey}, CASE WHEN EXISTS (SELECT 1 FROM acted) THEN ${effect} ELSE ${repeat} END
        RETURNING outcome`,
    );
    return rows[0]!.outcome === effect;
  }

  private async log(service: FakeService, operation: string, idempotencyKey: string, outcome: Outcome): Promise<void> {
    await query(
      this.db.pool,
      Prisma.sql`INSERT INTO fakes.calls (service, operation, idempotency_key, outcome) VALUES (${service}, ${operation}, ${idempotencyKey}, ${outcome})`,
    );
  }
}

/** How many times the fakes acted (`effects`) and were called (`calls`): all of it, or for one operation (and key). */
export async function countFakes(
  db: Pick<Db, '$queryRaw'>,
  filter: { service?: string; operation?: string; idempotencyKey?: string } = {},
): Promise<{ effects: number; calls: number }> {
  const { service = null, operation = null, idempotencyKey = null } = filter;
  const matches = (table: 'effects' | 'calls') => db.$queryRaw<[{ n: number }]>`
    SELECT count(*)::int AS n FROM ${Prisma.raw(`fakes.${table}`)}
     WHERE (${service}::text IS NULL OR service = ${service})
       AND (${operation}::text IS NULL OR operation = ${operation})
       AND (${idempotencyKey}::text IS NULL OR idempotency_key = ${idempotencyKey})`;
  const [[effects], [calls]] = await Promise.all([matches('effects'), matches('calls')]);
  return { effects: effects.n, calls: calls.n };
}
