import proto from '@temporalio/proto';

type History = proto.temporal.api.history.v1.IHistory;
const { EventType } = proto.temporal.api.enums.v1;
const { History: HistoryMessage } = proto.temporal.api.history.v1;

/**
 * What a run costs on Temporal Cloud, in the unit it bills, counted from the run's history by the
 * published rules (docs.temporal.io, "Temporal Cloud Actions"): a workflow started (by a client, or
 * by continue-as-new), each timer started (the implicit one of `condition` with a timeout too), each
 * search-attribute upsert (those set at start are free), each signal, each accepted update, each
 * activity attempt, and each workflow task that records local activities (one per task, however many
 * it records). Queries and heartbeats never reach the history and are not counted here.
 */
export interface Actions {
  total: number;
  start: number;
  update: number;
  signal: number;
  timer: number;
  upsert: number;
  activityAttempts: number;
  localActivityTasks: number;
}

export const ACTION_KINDS = [
  'start',
  'update',
  'signal',
  'timer',
  'upsert',
  'activityAttempts',
  'localActivityTasks',
] as const satisfies readonly (keyof Actions)[];

/** The marker the TypeScript SDK (its Core) records for a local activity's result. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** No action of any kind: what a count starts from. */
export function noActions(): Actions {
  return { total: 0, start: 0, update: 0, signal: 0, timer: 0, upsert: 0, activityAttempts: 0, localActivityTasks: 0 };
}

export function billableActions(history: History): Actions {
  const { total: _none, ...counted } = noActions();
  // The commands of one workflow task follow its WORKFLOW_TASK_COMPLETED event: its markers are its
  // local activities, and the task counts once whatever number it records.
  let taskRecordsLocalActivity: boolean | undefined;
  for (const event of history.events ?? []) {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        counted.start++;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        counted.update++;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        counted.signal++;
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED:
        counted.timer++;
        break;
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        counted.upsert++;
        break;
      // Only the last attempt is recorded, with its number: the earlier ones were attempts too.
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        counted.activityAttempts += Math.max(1, event.activityTaskStartedEventAttributes?.attempt ?? 1);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        taskRecordsLocalActivity = false;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
        taskRecordsLocalActivity = undefined;
        break;
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        if (
          event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER &&
          taskRecordsLocalActivity === false
        ) {
          counted.localActivityTasks++;
          taskRecordsLocalActivity = true;
        }
        break;
    }
  }
  const total = ACTION_KINDS.reduce((sum, kind) => sum + counted[kind], 0);
  return { total, ...counted };
}

/** What a self-hosted cluster writes and keeps for the run: its events, and their bytes as stored (protobuf). */
export function historySize(history: History): { events: number; bytes: number } {
  return {
    events: history.events?.length ?? 0,
    bytes: HistoryMessage.encode(HistoryMessage.fromObject(history)).finish().length,
  };
}
