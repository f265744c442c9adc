import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { buildIdOf } from '../../worker/deployment.js';

/**
 * The build id is what a rollout names (docs/architecture.md, "Rolling out a workflow change"): the
 * id `npm run build` prints in CI must be the one the image, built elsewhere, registers.
 */
/** (The comment's start alone in a string: a whole one here would be taken for this file's own source map.) */
const SOURCE_MAP_COMMENT = '//# sourceMappingURL=';
const inlineSourceMap = (root: string) =>
  `${SOURCE_MAP_COMMENT}data:application/json;base64,${Buffer.from(
    JSON.stringify({ version: 3, sources: [`${root}/workflows/index.ts`], mappings: 'AAAA' }),
  ).toString('base64')}`;

it('leaves out the inline source map, which names the files by where they were bundled', () => {
  const code = 'exports.api = 1;\n';
  expect(buildIdOf(code + inlineSourceMap('/app'))).toBe(buildIdOf(code + inlineSourceMap('/home/ci/checkout')));
  expect(buildIdOf('exports.api = 2;\n' + inlineSourceMap('/app'))).not.toBe(buildIdOf(code + inlineSourceMap('/app')));
});

/** What bundling the workflows needs of a checkout; node_modules is linked to this one's. */
const BUNDLED_FROM = ['package.json', 'tsconfig.json', 'workflows', 'domain', 'activities', 'lib', 'worker'];
const PRINT_BUILD_ID = `
import { DefaultLogger } from '@temporalio/worker';
import { buildIdOf } from './worker/deployment.js';
import { bundleWorkflows } from './worker/workflow-bundle.js';

const { code } = await bundleWorkflows(false, new DefaultLogger('WARN'));
console.log(buildIdOf(code));
`;
const copies: string[] = [];

afterAll(() => {
  for (const copy of copies) rmSync(copy, { recursive: true, force: true });
});

function checkout(prefix: string): string {
  const copy = mkdtempSync(join(tmpdir(), prefix));
  copies.push(copy);
  for (const entry of BUNDLED_FROM) cpSync(join(PROJECT_ROOT, entry), join(copy, entry), { recursive: true });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
  writeFileSync(join(copy, 'print-build-id.ts'), PRINT_BUILD_ID);
  return copy;
}

async function buildIdIn(copy: string, cwd: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(copy, 'print-build-id.ts')], {
    cwd,
  });
  return stdout.trim();
}

it('is the same for the same workflow code bundled in two checkouts, each from a working directory of its own', async () => {
  // Both copies directly in the temporary directory: webpack follows the node_modules link and
  // names the packages by their path from the copy, the same from two copies at the same depth.
  const [a, b] = [checkout('build-id-a-'), checkout('build-id-bb-')];
  const [idA, idB] = await Promise.all([buildIdIn(a, a), buildIdIn(b, join(b, 'workflows'))]);
  expect(idA).toMatch(/^[0-9a-f]{16}$/);
  expect(idB).toBe(idA);
}, 60_000);
