import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadDatabaseUrl } from '../lib/config/database.js';
import { createDb } from '../lib/db.js';
import { checkInvariants, countRows, formatCounts, formatReport } from '../ops/invariants.js';
import { durationOption, parseCommandArgs } from './command-args.js';
import { ping } from './databases.js';
import { embeddedDatabaseUrl, embeddedPostgres } from './embedded.js';
import { countFakeRows, formatFakeCounts, invariantsFor } from './fakes/invariants.js';
import { startPostgres, type RunningPostgres } from './postgres.js';
import { runMain, StartupError } from './startup-error.js';

/**
 * `npm run check [-- --grace 1m]`: the invariant checker over DATABASE_URL, else over the embedded
 * database of `npm start` (running, or started from .data/ for the check and stopped again): the
 * business invariants always, the fakes' effect checks where the database has the fakes' schema.
 * Prints every invariant with PASS/FAIL and the row counts; exits 1 on any violation.
 */
const USAGE = 'npm run check [-- --grace <how long work may still be due, e.g. 1m>]';

runMain(async () => {
  const { values } = parseCommandArgs({ options: { grace: { type: 'string', default: '1m' } } }, USAGE);
  const graceMs = durationOption('grace', values.grace, USAGE);
  const { url, postgres } = await findDatabase(loadDatabaseUrl());
  const db = createDb(url, { maxConnections: 2 });
  try {
    const { invariants, fakes } = await invariantsFor(db);
    const report = await checkInvariants(db, invariants, { graceMs });
    console.log(`Invariants over ${redact(url)} (grace ${values.grace}):`);
    console.log(formatReport(report).join('\n'));
    if (!fakes)
      console.log("No `fakes` schema (real providers keep their own records): the fakes' effect checks are skipped.");
    const counts = [formatCounts(await countRows(db)), ...(fakes ? [formatFakeCounts(await countFakeRows(db))] : [])];
    console.log(`Counts: ${counts.join('; ')}`);
    console.log(report.ok ? 'Verdict: PASS' : `Verdict: FAIL (${report.violations.length} violation(s))`);
    process.exitCode = report.ok ? 0 : 1;
  } finally {
    await db.$disconnect();
    await postgres?.stop();
  }
});

async function findDatabase(databaseUrl: string | undefined): Promise<{ url: string; postgres?: RunningPostgres }> {
  if (databaseUrl !== undefined) return { url: databaseUrl };
  const url = embeddedDatabaseUrl();
  if (
    await ping(url).then(
      () => true,
      () => false,
    )
  )
    return { url };
  const options = embeddedPostgres();
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) {
    throw new StartupError(
      'no database to check: set DATABASE_URL, or run `npm start` once so .data/ holds the embedded one',
    );
  }
  console.log(`Starting the embedded PostgreSQL from ${options.dataDir} for the check …`);
  const postgres = await startPostgres(options);
  return { url, postgres };
}

function redact(url: string): string {
  const u = new URL(url);
  u.password = u.password ? '***' : '';
  return u.toString();
}
