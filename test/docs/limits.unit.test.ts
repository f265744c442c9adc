import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';

/**
 * What the docs keep to: benchmark.md holds the method and the latest run in at most 300 lines
 * (older runs live in git history), and the README and docs/ speak of the service, not of the
 * issues that changed it.
 */
const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8');

it('keeps docs/benchmark.md to 300 lines', () => {
  expect(read('docs/benchmark.md').trimEnd().split('\n').length).toBeLessThanOrEqual(300);
});

it('names no issue number in the README or docs/', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(PROJECT_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const named = pages.flatMap((page) =>
    read(page)
      .split('\n')
      .flatMap((line, i) => (/[Ii]ssue [0-9]+/.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : [])),
  );
  expect(named).toEqual([]);
});
