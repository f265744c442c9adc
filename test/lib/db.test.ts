import { afterAll, beforeAll, expect, it } from 'vitest';
import { Prisma } from '@prisma/client';
import { createDb, type Db } from '../../lib/db.js';
import { inTransaction, query } from '../../lib/sql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * The activities use the pool under Prisma's client directly, so in a worker Prisma may never
 * connect, and with it would go the listener Prisma adds for connections that break while idle.
 * Such a break (a PostgreSQL restart, an outage) must not end the process: vitest fails a file
 * whose run raises an unhandled error, which is what an unheard pool 'error' event is.
 */
let database: TestDatabase;
let proxy: TcpProxy;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase();
  const target = new URL(database.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
  target.port = String(proxy.port);
  db = createDb(target.toString(), { maxConnections: 2 });
});
afterAll(async () => {
  await db?.$disconnect();
  await proxy?.close();
  await database?.drop();
});

it('survives idle connections that the database drops, and reconnects once it is back', async () => {
  await Promise.all([db.pool.query('SELECT pg_sleep(0.05)'), db.pool.query('SELECT pg_sleep(0.05)')]);
  expect(db.pool.idleCount).toBe(2);
  await proxy.down(); // both idle connections are cut under the pool
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(db.pool.idleCount).toBe(0); // the pool dropped them
  await proxy.up();
  expect((await db.pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
});

it('survives a connection cut in the middle of a transaction: the transaction fails, the process does not', async () => {
  let inside!: () => void;
  const started = new Promise<void>((resolve) => (inside = resolve));
  const transaction = inTransaction(db.pool, async (tx) => {
    await tx.query('SELECT 1');
    inside();
    await tx.query('SELECT pg_sleep(1)'); // cut while this runs
  });
  await started;
  await proxy.down();
  await expect(transaction).rejects.toThrow();
  await proxy.up();
  expect(db.pool.totalCount).toBe(0); // the broken connection was not handed back to the pool
  expect((await inTransaction(db.pool, (tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([
    { one: 1 },
  ]);
});

it('bounds a statement by statement_timeout, and the wait for a connection by the acquire timeout', async () => {
  const bounded = createDb(database.url, { maxConnections: 1, acquireTimeoutMs: 300, statementTimeoutMs: 200 });
  try {
    await expect(bounded.pool.query('SELECT pg_sleep(2)')).rejects.toMatchObject({ code: '57014' }); // query_canceled
    const holder = await bounded.pool.connect();
    try {
      const waitedSince = Date.now();
      await expect(bounded.pool.query('SELECT 1')).rejects.toThrow(/timeout/);
      expect(Date.now() - waitedSince).toBeLessThan(2_000);
    } finally {
      holder.release();
    }
    expect((await bounded.pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await bounded.$disconnect();
  }
});

it('prepares each statement once per connection, on the pool and in a transaction, unless told not to', async () => {
  /** The statements prepared on the connection that runs this, whose text starts with `start`. */
  const preparedOn = (on: Parameters<typeof query>[0], start: string) =>
    on
      .query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE $1', [
        `${start}%`,
      ])
      .then((r) => r.rows[0]!.n);
  for (const preparedStatements of [undefined, false]) {
    const one = createDb(database.url, {
      maxConnections: 1,
      ...(preparedStatements === false && { preparedStatements }),
    });
    try {
      const mark = `SELECT ${preparedStatements === false ? 2 : 1} AS prepared_or_not`;
      for (let i = 0; i < 3; i++) await query(one.pool, Prisma.raw(mark));
      await inTransaction(one.pool, (tx) => query(tx, Prisma.raw(mark)));
      expect(await preparedOn(one.pool, mark)).toBe(preparedStatements === false ? 0 : 1);
    } finally {
      await one.$disconnect();
    }
  }
});
