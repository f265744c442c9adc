import { readFileSync } from 'node:fs';

/** A page of docs/, as text. */
export function readDoc(name: string): string {
  return readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');
}

/**
 * The body rows of the markdown table whose header row starts with `header` (e.g. `| code | status |`),
 * each as its trimmed cells. Fails when there is no such table, so a renamed column cannot make a
 * check pass by finding nothing.
 */
export function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  if (start === -1) throw new Error(`no table with the header ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    // Split on the pipes between cells, not on `\|` escaped inside one.
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The first `code span` of a cell, without its backticks. */
export function codeIn(cell: string): string | undefined {
  return /`([^`]+)`/.exec(cell)?.[1];
}
