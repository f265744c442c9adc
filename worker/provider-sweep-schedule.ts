import type { Client } from '@temporalio/client';
import {
  PROVIDER_SWEEP_SCHEDULE_ID,
  PROVIDER_SWEEP_WORKFLOW_TYPE,
  type ProviderSweepInput,
} from '../domain/messages.js';
import { ensureSchedule } from './schedules.js';

/**
 * Makes sure the Temporal Schedule that runs the provider sweep exists with the configured period
 * (PROVIDER_SWEEP_EVERY). Every worker calls this at start: the first creates it, the others bring
 * it up to date. An overlap is skipped: one sweep at a time moves the cursor.
 */
export async function ensureProviderSweepSchedule(
  client: Client,
  options: { taskQueue: string; everyMs: number },
): Promise<'created' | 'updated'> {
  return ensureSchedule(client, PROVIDER_SWEEP_SCHEDULE_ID, {
    everyMs: options.everyMs,
    action: {
      type: 'startWorkflow',
      workflowType: PROVIDER_SWEEP_WORKFLOW_TYPE,
      taskQueue: options.taskQueue,
      args: [{ taskQueue: options.taskQueue } satisfies ProviderSweepInput],
    },
  });
}
