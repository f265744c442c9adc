import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsAction,
} from '@temporalio/client';

/**
 * Makes sure a Temporal Schedule exists that starts `action` every `everyMs`. Every worker calls
 * this at start: the first creates it, the others bring its period and action up to date (one
 * schedule, however many workers). An overlap is skipped, so one run at a time does the job, and a
 * tick missed while the cluster was down is caught up only within one period.
 */
export async function ensureSchedule(
  client: Client,
  scheduleId: string,
  { everyMs, action }: { everyMs: number; action: ScheduleOptionsAction },
): Promise<'created' | 'updated'> {
  const spec = { intervals: [{ every: everyMs }] };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: everyMs },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
  return 'updated';
}
