import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import { Reply, type Handler } from '../endpoint.js';
import type { Health } from '../responses.js';

/** 200 when both dependencies answer, 503 naming the ones that do not. */
export const health: Handler<Record<never, never>, 'public', { db: Db; temporal: Client }, typeof Health> = async (
  _input,
  { db, temporal },
) => {
  const [database, workflowService] = await Promise.all([
    probe(() => db.$queryRaw`SELECT 1`),
    probe(() => temporal.workflowService.getSystemInfo({})),
  ]);
  const body = { db: database, temporal: workflowService };
  return database === 'ok' && workflowService === 'ok' ? body : new Reply(body, { status: 503 });
};

async function probe(check: () => Promise<unknown>): Promise<'ok' | 'down'> {
  const timeout = new Promise<'down'>((resolve) => setTimeout(resolve, 2_000, 'down').unref());
  return Promise.race([
    check().then(
      () => 'ok' as const,
      () => 'down' as const,
    ),
    timeout,
  ]);
}
