import { ACTION_KINDS } from './actions.js';
import { costOfPaths } from './paths.js';

/**
 * `npm run cost`: what each path of one order costs on Temporal, from its recorded history, the same
 * on every machine and with nothing running: billable actions by Temporal Cloud's published rules
 * (by kind), and the history's events and bytes. A path that holds the order (an outage, money on
 * its way) is also given per hour of its recorded run.
 */
const rows = await costOfPaths();
const header = ['path', 'actions', ...ACTION_KINDS, 'events', 'bytes', 'actions an hour'];
console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
for (const r of rows) {
  const perHour =
    r.perHour && r.hours > 0 ? `${(r.actions.total / r.hours).toFixed(1)} (over ${r.hours.toFixed(1)} h)` : '';
  const cells = [r.path, r.actions.total, ...ACTION_KINDS.map((k) => r.actions[k]), r.events, r.bytes, perHour];
  console.log(`| ${cells.join(' | ')} |`);
}
