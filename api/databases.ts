import type { Config } from '../lib/config/index.js';
import { createDb, type Db } from '../lib/db.js';

/** The API's two pools (AppDeps says why two), sized and bounded as configured. */
export function createApiDatabases(
  databaseUrl: string,
  config: Pick<Config, 'databasePoolSize' | 'databasePublicPoolSize' | 'databasePoolOptions'>,
): { db: Db; publicDb: Db } {
  return {
    db: createDb(databaseUrl, { maxConnections: config.databasePoolSize, ...config.databasePoolOptions }),
    publicDb: createDb(databaseUrl, { maxConnections: config.databasePublicPoolSize, ...config.databasePoolOptions }),
  };
}
