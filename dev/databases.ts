import pg from 'pg';
import { StartupError } from './startup-error.js';

// Databases on a PostgreSQL server, reached through its superuser URL: what the runner, the
// tests and db:migration need, with the `pg` driver (a psql client may not be installed).

/** Creates a database on the server of `adminUrl` and returns its URL. */
export async function createDatabase(
  adminUrl: string,
  name: string,
  options: { template?: string } = {},
): Promise<string> {
  const template = options.template === undefined ? '' : ` TEMPLATE ${pg.escapeIdentifier(options.template)}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}${template}`));
  return databaseUrl(adminUrl, name);
}

/** Like createDatabase, but keeps a database that already exists (the runner's, across restarts). */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const { rowCount } = await withClient(adminUrl, (client) =>
    client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]),
  );
  return rowCount ? databaseUrl(adminUrl, name) : createDatabase(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  );
}

/**
 * Login roles with every right, created unless they exist: they tell clients apart (e.g. in
 * pg_stat_statements), not what they may do.
 */
export async function ensureSuperuserRoles(adminUrl: string, roles: readonly string[]): Promise<void> {
  await withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ rolname: string }>('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [
      roles,
    ]);
    const existing = new Set(rows.map((r) => r.rolname));
    for (const role of roles.filter((r) => !existing.has(r)))
      await client.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN SUPERUSER`);
  });
}

/** Runs a script of several statements (e.g. `prisma migrate diff --script` output). */
export async function runSql(url: string, sql: string): Promise<void> {
  await withClient(url, (client) => client.query(sql));
}

/** One line naming the server when DATABASE_URL cannot be used (without echoing the password). */
export async function assertReachable(url: string): Promise<void> {
  try {
    await ping(url);
  } catch (err) {
    const { hostname, port, pathname } = new URL(url);
    throw new StartupError(`DATABASE_URL: cannot use ${hostname}:${port || 5432}${pathname} (${describePgError(err)})`);
  }
}

/** The URL of database `name` on the server of `serverUrl`, with the same login. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Resolves once `SELECT 1` succeeds on `url`; rejects with the driver's error otherwise. */
export async function ping(url: string): Promise<void> {
  await withClient(url, (client) => client.query('SELECT 1'));
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `localhost` resolves to two addresses, and pg then reports an AggregateError with no message. */
function describePgError(err: unknown): string {
  if (err instanceof AggregateError) return describePgError(err.errors[0]);
  return err instanceof Error ? err.message : String(err);
}
