import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type { Db } from '../../lib/db.js';

/** 200 when both dependencies answer, 503 naming the ones that do not. */
export function healthRouter({ db, temporal }: { db: Db; temporal: Client }): Router {
  const router = Router();
  router.get('/healthz', async (_req, res) => {
    const [database, workflowService] = await Promise.all([
      probe(() => db.$queryRaw`SELECT 1`),
      probe(() => temporal.workflowService.getSystemInfo({})),
    ]);
    const body = { db: database, temporal: workflowService };
    res.status(database === 'ok' && workflowService === 'ok' ? 200 : 503).json(body);
  });
  return router;
}

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
