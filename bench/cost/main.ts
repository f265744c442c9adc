import { ACTION_KINDS, type Actions } from './actions.js';
import { PAYLOAD_KEYS } from '../../test/helpers/payload-keys.js';
import { loadHistoryFixtures } from '../../test/replay/history-fixtures.js';
import { historyBytes } from './history-bytes.js';
import { COST_PATHS, costOfPaths, heldCost } from './paths.js';
import { checkAgainstServer } from './server-check.js';

/**
 * `npm run cost`: what each path of one order costs on Temporal, from its recorded history, the same
 * on every machine and with nothing running: billable actions by Temporal Cloud's published rules
 * (by kind), and the history's events and bytes. A long hold (money on its way, a provider silent
 * for days) is also given per hour of its recorded run, and an outage's hour by what it adds to the
 * same order without it.
 *
 * `npm run cost -- --bytes [history]`: where the history bytes go, by event for one recorded history
 * (the expired order's unless named) and in sum for each path: our values, what the payload codec
 * adds to them, search attributes, the SDK's local-activity marker data, and Temporal's own framing.
 *
 * `npm run cost -- --server`: the same count held against Temporal Server's own `action` metric, on
 * a local stack (a minute or two).
 */
const rows = await costOfPaths();
const header = ['path', 'actions', ...ACTION_KINDS, 'events', 'bytes', 'actions an hour'];
printTable(
  header,
  rows.map((r) => [r.path, r.actions.total, ...ACTION_KINDS.map((k) => r.actions[k]), r.events, r.bytes, heldCost(r)]),
);

if (process.argv.includes('--bytes')) {
  const histories = new Map((await loadHistoryFixtures()).map(({ name, history }) => [name, history]));
  const named = process.argv[process.argv.indexOf('--bytes') + 1];
  const detailed = named !== undefined && !named.startsWith('--') ? named : COST_PATHS[0].history;
  const columns = ['data', 'codec', 'searchAttributes', 'sdkMarker', 'framing'] as const;
  console.log(`\nWhere the bytes go, by event, in ${detailed} (data: our values; codec: what sealing them adds):\n`);
  const events = await historyBytes(histories.get(detailed)!, PAYLOAD_KEYS);
  printTable(
    ['event', 'type', 'bytes', ...columns],
    events.map((e) => [e.eventId, e.type, e.bytes, ...columns.map((c) => e[c])]),
  );
  console.log('\nBy path (the events; the history adds a few bytes of framing per event):\n');
  const rows = [];
  for (const { path, history } of COST_PATHS) {
    const all = await historyBytes(histories.get(history)!, PAYLOAD_KEYS);
    rows.push([path, all.reduce((n, e) => n + e.bytes, 0), ...columns.map((c) => all.reduce((n, e) => n + e[c], 0))]);
  }
  printTable(['path', 'bytes', ...columns], rows);
}

if (process.argv.includes('--server')) {
  const checked = await checkAgainstServer((line) => console.log(line));
  console.log("\nPer order, the runs' histories against Temporal Server's `action` counter (history / server):\n");
  printTable(
    [
      'path',
      'orders',
      'actions',
      ...ACTION_KINDS,
      'events',
      'bytes',
      'statements (round trips)',
      'counted by the server, not in any history',
    ],
    checked.map((r) => [
      r.path,
      r.orders,
      pair(r.history, r.server, 'total'),
      ...ACTION_KINDS.map((k) => pair(r.history, r.server, k)),
      round(r.events),
      r.bytes,
      round(r.statements),
      Object.entries(r.notInHistory)
        .map(([type, n]) => `${type} ${round(n)}`)
        .join(', ') || 'none',
    ]),
  );
  const differs = checked.filter((r) => r.history.total !== r.server.total);
  if (differs.length > 0) {
    console.log(`\nCOST: the counts differ on ${differs.map((r) => r.path).join(', ')}`);
    process.exitCode = 1;
  } else console.log('\nCOST: every path counted alike from the histories and by the server');
}

function pair(history: Actions, server: Actions, kind: keyof Actions): string {
  return history[kind] === server[kind]
    ? `${round(history[kind])}`
    : `${round(history[kind])} / ${round(server[kind])}`;
}

function round(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function printTable(header: string[], rows: (string | number)[][]): void {
  console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}
