import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabase, dropDatabase } from '../../dev/databases.js';
import { createDb, type Db } from '../../lib/db.js';

export interface TestDatabase {
  url: string;
  prisma: Db;
  /** Disconnects and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file, copied from the template that global setup built with the
 * real migrations: each file starts from exactly what production gets, in a fraction of a second.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject('postgresUrl');
  const name = `test_${randomUUID().replaceAll('-', '')}`;
  const url = await createDatabase(serverUrl, name, { template: inject('migratedTemplate') });
  const prisma = createDb(url);
  return {
    url,
    prisma,
    async drop() {
      await prisma.$disconnect();
      await dropDatabase(serverUrl, name);
    },
  };
}
