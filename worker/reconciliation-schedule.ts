import type { Client } from '@temporalio/client';
import { PAYMENT_SWEEP_LIMIT } from '../activities/reconciliation.js';
import { RECONCILIATION_SCHEDULE_ID, RECONCILIATION_WORKFLOW_TYPE } from '../domain/messages.js';
import { ensureSchedule } from './schedules.js';

/** Orders examined per sweep: bounded, so a backlog is worked off over several sweeps, never in one burst. */
const SWEEP_LIMIT = 500;

/**
 * Makes sure the Temporal Schedule that runs the reconciliation sweep exists with the configured
 * interval. Every worker calls this at start: the first creates it, the others bring it up to date
 * (one schedule, however many workers).
 */
export async function ensureReconciliationSchedule(
  client: Client,
  options: { taskQueue: string; everyMs: number; graceMs: number },
): Promise<'created' | 'updated'> {
  return ensureSchedule(client, RECONCILIATION_SCHEDULE_ID, {
    everyMs: options.everyMs,
    action: {
      type: 'startWorkflow',
      workflowType: RECONCILIATION_WORKFLOW_TYPE,
      taskQueue: options.taskQueue,
      args: [
        {
          graceMs: options.graceMs,
          limit: SWEEP_LIMIT,
          paymentLimit: PAYMENT_SWEEP_LIMIT,
          taskQueue: options.taskQueue,
        },
      ],
    },
  });
}
