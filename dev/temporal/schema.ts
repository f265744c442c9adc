import { execFile } from 'node:child_process';
import { appendFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { ensureDatabase, runSql } from '../databases.js';
import { StartupError } from '../startup-error.js';

/**
 * Temporal's two databases on a PostgreSQL server, created when missing and brought to the schema
 * version of the server binary by its SQL tool, from the versioned folders embedded in it
 * (schema/postgresql/v12/… of the pinned module). Every step is idempotent: run at every start.
 */
export const DATABASES = [
  { name: 'temporal', schema: 'postgresql/v12/temporal' },
  { name: 'temporal_visibility', schema: 'postgresql/v12/visibility' },
] as const;

export async function prepareTemporalDatabases(sqlTool: string, adminUrl: string, logFile: string): Promise<void> {
  const { hostname, port, username } = new URL(adminUrl);
  const connection = [
    '--plugin',
    'postgres12',
    '--ep',
    hostname,
    '-p',
    port || '5432',
    '-u',
    decodeURIComponent(username),
  ];
  for (const { name, schema } of DATABASES) {
    await ensureDatabase(adminUrl, name);
    // Temporal's store only: a commit returns before its WAL reaches the disk. A crashed server
    // loses nothing; an OS crash may lose the last commits (the development store, never
    // production's). The service's own database keeps the server's durable default.
    await runSql(adminUrl, `ALTER DATABASE ${pg.escapeIdentifier(name)} SET synchronous_commit = off`);
    await run(sqlTool, [...connection, '--db', name, 'setup-schema', '-v', '0.0'], logFile);
    await run(sqlTool, [...connection, '--db', name, 'update-schema', '--schema-name', schema], logFile);
  }
}

async function run(tool: string, args: string[], logFile: string): Promise<void> {
  await appendFile(logFile, `$ temporal-sql-tool ${args.join(' ')}\n`);
  try {
    const { stdout, stderr } = await promisify(execFile)(tool, args);
    await appendFile(logFile, stdout + stderr);
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    await appendFile(logFile, stdout + stderr);
    throw new StartupError(
      `temporal-sql-tool ${args.slice(-4).join(' ')} failed: ${(stderr || stdout || String(err)).trim().split('\n').slice(-3).join(' ')}`,
    );
  }
}
