import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsAction,
} from '@temporalio/client';
import { PAYMENT_SWEEP_LIMIT } from '../activities/reconciliation.js';
import { RECONCILIATION_SCHEDULE_ID, RECONCILIATION_WORKFLOW_TYPE } from '../domain/messages.js';

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
  const spec = { intervals: [{ every: options.everyMs }] };
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: RECONCILIATION_WORKFLOW_TYPE,
    taskQueue: options.taskQueue,
    args: [
      { graceMs: options.graceMs, limit: SWEEP_LIMIT, paymentLimit: PAYMENT_SWEEP_LIMIT, taskQueue: options.taskQueue },
    ],
  };
  try {
    await client.schedule.create({
      scheduleId: RECONCILIATION_SCHEDULE_ID,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: options.everyMs },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(RECONCILIATION_SCHEDULE_ID).update((previous) => ({ ...previous, spec, action }));
  return 'updated';
}
