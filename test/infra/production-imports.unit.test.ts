import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import type { FakesForWorker } from '../../worker/third-parties.js';

/**
 * The project files tsc needs to compile `entry`: every relative module it names, directly or not —
 * static, type-only and `import('literal')` alike. The switches load dev/fakes by a path held in a
 * variable, which neither tsc nor this walk follows.
 */
function compileClosure(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(join(PROJECT_ROOT, file), 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (fileName.startsWith('.'))
        queue.push(relative(PROJECT_ROOT, resolve(PROJECT_ROOT, dirname(file), fileName.replace(/\.js$/, '.ts'))));
    }
  }
  return [...seen].sort();
}

it.each(['worker/main.ts', 'api/server.ts'])(
  '%s compiles and loads without dev/, bench/ or test/ (the fakes only when switched on)',
  (entry) => {
    const closure = compileClosure(entry);
    expect(closure).toContain('lib/config/index.ts');
    expect(closure.filter((file) => /^(dev|bench|test)\//.test(file))).toEqual([]);
  },
);

it('dev/fakes has what the worker loads it for', async () => {
  // A type error here when dev/fakes/index.ts and what its loader expects drift apart.
  const fakes: FakesForWorker = await import('../../dev/fakes/index.js');
  expect(Object.keys(fakes)).toEqual(expect.arrayContaining(['assertFakesSchema', 'createFakeThirdParties']));
});
