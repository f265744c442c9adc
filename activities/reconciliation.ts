import { Prisma } from '@prisma/client';
import { getClient, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ORDER_WORKFLOW_TYPE, orderLifecycleInput, orderWorkflowId } from '../domain/messages.js';
import { ORDER_TRANSITIONS } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import { asOf, type ActivityDeps } from './deps.js';
import { nowOr, statusIn } from './guarded-sql.js';

export interface SweepResult {
  /** UNPAID orders found past their deadline plus the grace period. */
  scanned: number;
  /** Those whose workflow was not running, now handed to a new OrderLifecycle run. */
  adopted: string[];
}

export function createReconciliationActivities(deps: ActivityDeps) {
  const { db } = deps;

  return {
    /**
     * The old scan job, narrowed to a safety net: UNPAID orders past their deadline plus a grace
     * period (a range scan on the (status, expires_at) index). An order whose workflow is still
     * running is left to it; one whose workflow is gone gets a new OrderLifecycle run that adopts it
     * and drives it through the same guarded cancel. Any hit means a trigger was lost upstream.
     */
    async sweepStrandedOrders(input: { graceMs: number; limit: number; taskQueue: string }): Promise<SweepResult> {
      const now = await asOf(deps);
      const { rows: stranded } = await query<{ id: string }>(
        db.pool,
        Prisma.sql`
          SELECT id FROM orders
          WHERE ${statusIn('orders', ORDER_TRANSITIONS.cancel.from)} AND expires_at < ${nowOr(now)} - ${input.graceMs} * interval '1 millisecond'
          ORDER BY expires_at
          LIMIT ${input.limit}`,
      );
      const client = getClient();
      const adopted: string[] = [];
      for (const { id } of stranded) {
        const workflowId = orderWorkflowId(id);
        if (await isRunning(client.workflow.getHandle(workflowId))) continue;
        // USE_EXISTING: if a run appeared since we looked, it is kept and nothing new starts.
        await client.workflow.start(ORDER_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: input.taskQueue,
          args: [orderLifecycleInput(id, { adopt: true })],
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        adopted.push(id);
      }
      if (adopted.length > 0) {
        log.warn('reconciliation adopted orders whose workflow was gone: a trigger was lost upstream', { adopted });
      }
      return { scanned: stranded.length, adopted };
    },
  };
}

async function isRunning(handle: { describe(): Promise<{ status: { name: string } }> }): Promise<boolean> {
  try {
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
