import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';

/**
 * The project files tsc needs to compile `entry`: every relative module it names, directly or not —
 * static, type-only and `import('literal')` alike.
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

it.each(['worker/main.ts', 'api/server.ts'])('%s compiles and loads without dev/, bench/ or test/', (entry) => {
  const closure = compileClosure(entry);
  expect(closure).toContain('lib/config/index.ts');
  expect(closure.filter((file) => /^(dev|bench|test)\//.test(file))).toEqual([]);
});

it("the production build compiles nothing of dev/: its entries are the service's own", () => {
  const { config } = ts.readConfigFile(join(PROJECT_ROOT, 'tsconfig.build.json'), ts.sys.readFile) as {
    config: { include: string[] };
  };
  expect(config.include.filter((path) => /^(dev|bench|test)(\/|$)/.test(path))).toEqual([]);
});

it.each([
  ['dev/worker.ts', 'worker/run-worker.ts'],
  ['dev/api.ts', 'api/run-api.ts'],
])("the local stack's %s runs the service's own %s, the fakes handed in", (entry, product) => {
  const closure = compileClosure(entry);
  expect(closure).toContain(product);
  expect(closure).toContain('dev/fakes/index.ts');
});
