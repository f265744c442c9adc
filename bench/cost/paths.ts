import type proto from '@temporalio/proto';
import { loadHistoryFixtures } from '../../test/replay/history-fixtures.js';
import { billableActions, historySize, type Actions } from './actions.js';

type History = proto.temporal.api.history.v1.IHistory;

/**
 * The paths of one order whose cost is counted, each from a history recorded by
 * test/replay/record-histories.record.ts on the current workflow code (a workflow change
 * re-records them). `hours`: the path is an outage or a hold, so its cost is also given per hour
 * of the recorded run (first event to last).
 */
export const COST_PATHS = [
  { path: 'an order that expires', history: 'expired-and-compensated' },
  { path: 'one paid and fulfilled', history: 'paid-and-fulfilled' },
  { path: 'reminded before its deadline (PAYMENT_REMINDER_BEFORE), then paid', history: 'reminded-then-paid' },
  { path: "a customer's cancel", history: 'customer-cancelled' },
  { path: 'awaiting funds, then paid', history: 'awaiting-funds-then-paid', perHour: true },
  {
    path: 'the provider silent at the deadline (one run, until it continues as new)',
    history: 'provider-outage-continued-as-new',
    perHour: true,
  },
  { path: 'a database outage, then paid', history: 'database-outage-then-paid', perHour: true },
] as const;

export interface PathCost {
  path: string;
  history: string;
  actions: Actions;
  events: number;
  bytes: number;
  /** Hours from the run's first event to its last (its recorded time, skipped or not). */
  hours: number;
  perHour: boolean;
}

export async function costOfPaths(): Promise<PathCost[]> {
  const fixtures = new Map((await loadHistoryFixtures()).map(({ name, history }) => [name, history]));
  return COST_PATHS.map(({ path, history: name, ...rest }) => {
    const history = fixtures.get(name);
    if (!history) throw new Error(`no recorded history ${name} in test/replay/histories`);
    return {
      path,
      history: name,
      actions: billableActions(history),
      ...historySize(history),
      hours: spanHours(history),
      perHour: 'perHour' in rest,
    };
  });
}

function spanHours(history: History): number {
  const times = (history.events ?? []).map((e) => Number(e.eventTime?.seconds ?? 0));
  return times.length < 2 ? 0 : (Math.max(...times) - Math.min(...times)) / 3600;
}
