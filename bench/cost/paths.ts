import type proto from '@temporalio/proto';
import { loadHistoryFixtures } from '../../test/replay/history-fixtures.js';
import { billableActions, historySize, type Actions } from './actions.js';

type History = proto.temporal.api.history.v1.IHistory;

/** The order that expires with the provider answering its closing: what an outage's hour is counted over. */
const CLOSED_AT_PROVIDER = 'provider-closed-then-cancelled';

/**
 * The paths of one order whose cost is counted, each from a history recorded by
 * test/replay/record-histories.record.ts on the current workflow code (a workflow change
 * re-records them). `perHour`: the path is a long hold, so its cost is also given per hour of the
 * recorded run (first event to last). `over`: the path is the order of history `over` held by an
 * outage for an hour, so what the hour adds is its actions less that order's.
 */
export const COST_PATHS = [
  { path: 'an order that expires', history: 'expired-and-compensated' },
  { path: 'an order that expires, its payment closed at the provider', history: CLOSED_AT_PROVIDER },
  { path: 'one paid and fulfilled', history: 'paid-and-fulfilled' },
  { path: 'reminded before its deadline (PAYMENT_REMINDER_BEFORE), then paid', history: 'reminded-then-paid' },
  { path: "a customer's cancel", history: 'customer-cancelled' },
  { path: 'awaiting funds for a day, then paid', history: 'awaiting-funds-then-paid', perHour: true },
  {
    path: 'an hour of provider outage at the deadline',
    history: 'provider-outage-hour-then-cancelled',
    over: CLOSED_AT_PROVIDER,
  },
  {
    path: 'an hour of database outage at the deadline',
    history: 'database-outage-hour-then-cancelled',
    over: CLOSED_AT_PROVIDER,
  },
  {
    path: 'the provider silent at the deadline (one run, until it continues as new)',
    history: 'provider-outage-continued-as-new',
    perHour: true,
  },
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
  /** An outage's hour: the actions it adds to the same order without the outage. */
  added?: number;
}

export async function costOfPaths(): Promise<PathCost[]> {
  const fixtures = new Map((await loadHistoryFixtures()).map(({ name, history }) => [name, history]));
  const recorded = (name: string): History => {
    const history = fixtures.get(name);
    if (!history) throw new Error(`no recorded history ${name} in test/replay/histories`);
    return history;
  };
  return COST_PATHS.map(({ path, history: name, ...rest }) => {
    const history = recorded(name);
    const actions = billableActions(history);
    return {
      path,
      history: name,
      actions,
      ...historySize(history),
      hours: spanHours(history),
      perHour: 'perHour' in rest,
      ...('over' in rest && { added: actions.total - billableActions(recorded(rest.over)).total }),
    };
  });
}

/** What time held costs on the path: per hour of a long hold's recorded run, or what an outage's hour adds. */
export function heldCost(c: PathCost): string {
  if (c.added !== undefined) return `${c.added} added by the hour`;
  return c.perHour && c.hours > 0 ? `${(c.actions.total / c.hours).toFixed(1)} (over ${c.hours.toFixed(1)} h)` : '';
}

function spanHours(history: History): number {
  const times = (history.events ?? []).map((e) => Number(e.eventTime?.seconds ?? 0));
  return times.length < 2 ? 0 : (Math.max(...times) - Math.min(...times)) / 3600;
}
