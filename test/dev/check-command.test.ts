import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';

/**
 * `npm run check` refuses bad arguments in one line saying what is wrong, with the usage, and exits
 * 1 before it looks for a database: no stack trace.
 */
function check(args: string[]): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'dev/check.ts', ...args], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, stderr: run.stderr };
}

const USAGE = '; usage: npm run check [-- --grace';

it.each([
  [['--grace', '0s'], 'error: --grace: "0s" must be longer than zero'],
  [['--grace', 'soon'], 'error: --grace: "soon" is not a duration'],
  [['--grace'], "error: Option '--grace <value>' argument missing"],
  [['--grac', '1m'], "error: Unknown option '--grac'"],
  [['extra'], "error: Unexpected argument 'extra'"],
])('%j: exits 1 with one line', (args, start) => {
  const { status, stderr } = check(args);
  expect(status).toBe(1);
  expect(stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^${escape(start)}.*${escape(USAGE)}`)),
  ]);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
