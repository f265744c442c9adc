import { readFile } from 'node:fs/promises';

/** The last lines of a child's log, to show with a start-up failure instead of "see the log". */
export async function logTail(path: string, lines = 15): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return `end of ${path}:\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`;
}
