import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/**
 * What the database did, read by the bench as the superuser `postgres` (whose own queries are left
 * out): pg_stat_statements calls per role and connection counts sampled from pg_stat_activity.
 */
export class DbObserver {
  private constructor(private readonly client: pg.Client) {}

  static async connect(url: string): Promise<DbObserver> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new DbObserver(client);
  }

  /** Statement executions (pg_stat_statements calls, BEGIN/COMMIT included) and rows, per role. */
  async statementsByRole(): Promise<Record<string, { calls: number; rows: number }>> {
    const { rows } = await this.client.query<{ role: string; calls: string; rows: string }>(`
      SELECT r.rolname AS role, sum(s.calls) AS calls, sum(s.rows) AS rows
      FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
      WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      GROUP BY r.rolname`);
    return Object.fromEntries(rows.map((r) => [r.role, { calls: Number(r.calls), rows: Number(r.rows) }]));
  }

  /** The most executed statements of one role since the last reset (to see where the calls go). */
  async topStatements(role: string, limit = 12): Promise<Array<{ calls: number; query: string }>> {
    const { rows } = await this.client.query<{ calls: string; query: string }>(
      `SELECT s.calls, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 160) AS query
       FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
       WHERE r.rolname = $1 AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ORDER BY s.calls DESC LIMIT $2`,
      [role, limit],
    );
    return rows.map((r) => ({ calls: Number(r.calls), query: r.query }));
  }

  async resetStatements(): Promise<void> {
    await this.client.query('SELECT pg_stat_statements_reset()');
  }

  /** Client connections to the bench database other than this observer's: total and active. */
  async connections(): Promise<{ total: number; active: number }> {
    const { rows } = await this.client.query<{ total: string; active: string }>(`
      SELECT count(*) AS total, count(*) FILTER (WHERE state = 'active') AS active
      FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`);
    return { total: Number(rows[0]!.total), active: Number(rows[0]!.active) };
  }

  query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.client.query<R>(sql, params);
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/** Samples pg_stat_activity every `everyMs` until stopped; keeps the peak. */
export function sampleConnections(observer: DbObserver, everyMs = 250) {
  let peakTotal = 0;
  let peakActive = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const c = await observer.connections();
      peakTotal = Math.max(peakTotal, c.total);
      peakActive = Math.max(peakActive, c.active);
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { peakTotal, peakActive };
    },
  };
}
