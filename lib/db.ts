import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';

export type Db = PrismaClient;

/** Prisma over node-postgres: the Rust-free client needs no engine download. */
export function createDb(databaseUrl: string, options: { maxConnections?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.maxConnections ?? 10 });
  return new PrismaClient({ adapter });
}
