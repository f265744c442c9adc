import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installJobQueue } from '../lib/job-queue.js';
import { PROJECT_ROOT, SCHEMA_PATH } from './paths.js';
import { runPrisma } from './prisma-cli.js';

/**
 * Applies prisma/migrations that the database has not seen yet (offline: Prisma's WebAssembly
 * schema engine), and installs graphile-worker's schema, which the trigger on order_events calls.
 */
export async function migrateDeploy(databaseUrl: string): Promise<void> {
  await runPrisma(['migrate', 'deploy'], { databaseUrl });
  await installJobQueue(databaseUrl);
}

/**
 * `prisma migrate diff --script` between two schema sources (e.g. `--from-empty`,
 * `--to-schema-datamodel <file>`). Offline it can only diff schema files, yet prisma.config.ts's
 * adapter still connects, hence the URL of any reachable database.
 */
export function diffScript(databaseUrl: string, fromTo: readonly string[]): Promise<string> {
  return runPrisma(['migrate', 'diff', ...fromTo, '--script'], { databaseUrl });
}

/**
 * Generates the Prisma client unless it was generated from the current schema. npm does not run
 * @prisma/client's own postinstall here (allowScripts), so a fresh install has no client at all.
 * `prisma generate` copies the schema next to the client, which makes the check a file compare.
 */
export async function ensurePrismaClient(): Promise<void> {
  const generatedFrom = join(PROJECT_ROOT, 'node_modules', '.prisma', 'client', 'schema.prisma');
  const [current, generated] = await Promise.all([
    readFile(SCHEMA_PATH, 'utf8'),
    readFile(generatedFrom, 'utf8').catch(() => undefined),
  ]);
  if (current === generated) return;
  console.log('Generating the Prisma client from prisma/schema.prisma …');
  await runPrisma(['generate']);
}
