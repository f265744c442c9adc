import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsAction,
} from '@temporalio/client';
import {
  PROVIDER_SWEEP_SCHEDULE_ID,
  PROVIDER_SWEEP_WORKFLOW_TYPE,
  type ProviderSweepInput,
} from '../domain/messages.js';

/**
 * Makes sure the Temporal Schedule that runs the provider sweep exists with the configured period
 * (PROVIDER_SWEEP_EVERY). Every worker calls this at start: the first creates it, the others bring
 * it up to date. An overlap is skipped: one sweep at a time moves the cursor.
 */
export async function ensureProviderSweepSchedule(
  client: Client,
  options: { taskQueue: string; everyMs: number },
): Promise<'created' | 'updated'> {
  const spec = { intervals: [{ every: options.everyMs }] };
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: PROVIDER_SWEEP_WORKFLOW_TYPE,
    taskQueue: options.taskQueue,
    args: [{ taskQueue: options.taskQueue } satisfies ProviderSweepInput],
  };
  try {
    await client.schedule.create({
      scheduleId: PROVIDER_SWEEP_SCHEDULE_ID,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: options.everyMs },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(PROVIDER_SWEEP_SCHEDULE_ID).update((previous) => ({ ...previous, spec, action }));
  return 'updated';
}
