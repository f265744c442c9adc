import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** Every dev tool resolves files from the clone's root, so they work from any working directory. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Local state of `npm start` (git-ignored): PostgreSQL's data directory, Temporal's SQLite file, logs. */
export const DATA_DIR = join(PROJECT_ROOT, '.data');

export const SCHEMA_PATH = join(PROJECT_ROOT, 'prisma', 'schema.prisma');
export const MIGRATIONS_DIR = join(PROJECT_ROOT, 'prisma', 'migrations');
