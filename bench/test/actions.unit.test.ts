import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { billableActions } from '../cost/actions.js';
import { costOfPaths } from '../cost/paths.js';

const { EventType } = proto.temporal.api.enums.v1;
type Event = proto.temporal.api.history.v1.IHistoryEvent;

/**
 * What the order's two common paths, and the reminded one, may cost on Temporal, in billable
 * actions. A change that adds one to any fails here; one that saves some lowers these.
 */
const ACTION_BUDGET = {
  'an order that expires': 6,
  'one paid and fulfilled': 7,
  // The paid path and the reminder's two: its timer, and the task of its local activity.
  'reminded before its deadline (PAYMENT_REMINDER_BEFORE), then paid': 9,
} as const;

/** What an hour of each outage at the deadline may add to an order: the cost issue's bound. */
const OUTAGE_HOUR_BUDGET = 30;

const task = (): Event[] => [
  { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED },
  { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED },
  { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED },
];
const localActivity = (): Event => ({
  eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
  markerRecordedEventAttributes: { markerName: 'core_local_activity' },
});

describe('billable actions counted from a history', () => {
  it('counts a task that records local activities once, however many it records, and each activity attempt', () => {
    const events: Event[] = [
      { eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED },
      ...task(),
      localActivity(),
      localActivity(),
      { eventType: EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES },
      { eventType: EventType.EVENT_TYPE_TIMER_STARTED },
      { eventType: EventType.EVENT_TYPE_TIMER_FIRED },
      ...task(),
      { eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED },
      { eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED, activityTaskStartedEventAttributes: { attempt: 3 } },
      { eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED },
      ...task(),
      localActivity(),
      { eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED },
      { eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED },
    ];
    expect(billableActions({ events })).toEqual({
      total: 9,
      start: 1,
      update: 0,
      signal: 1,
      timer: 1,
      upsert: 1,
      activityAttempts: 3,
      localActivityTasks: 2,
    });
  });

  it('keeps the recorded expired, paid and reminded paths within their budgets', async () => {
    const costs = await costOfPaths();
    for (const [path, budget] of Object.entries(ACTION_BUDGET)) {
      const cost = costs.find((c) => c.path === path);
      expect(cost, path).toBeDefined();
      expect(cost!.actions.total, `${path}: ${JSON.stringify(cost!.actions)}`).toBeLessThanOrEqual(budget);
    }
  });

  it('keeps what the recorded hour of each outage adds to an order within the bound', async () => {
    const hours = (await costOfPaths()).filter((c) => c.added !== undefined);
    expect(hours.map((c) => c.path)).toEqual([
      'an hour of provider outage at the deadline',
      'an hour of database outage at the deadline',
    ]);
    for (const c of hours)
      expect(c.added, `${c.path}: ${JSON.stringify(c.actions)}`).toBeLessThanOrEqual(OUTAGE_HOUR_BUDGET);
  });
});
