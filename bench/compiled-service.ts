import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../dev/paths.js';

/**
 * The bench runs the service as the image does: compiled (`npm run build`: tsc, then the prebuilt
 * workflow bundle), from dist-dev/ (`npm run build:dev`: that code with the local stack's entries,
 * which hand the fakes in). It builds once at its start when dist-dev/ is missing or older than any
 * file the build reads, so a run never measures code other than the checkout's.
 */
const BUILD_INPUTS = ['api', 'worker', 'activities', 'domain', 'lib', 'workflows', 'dev/fakes', 'prisma'];
const BUILD_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json', // the build script itself
  'package-lock.json',
  'tsconfig.dev-build.json',
  'dev/copy-orders-page.ts',
  'dev/build-workflow-bundle.ts',
  'dev/build-dev-service.ts',
  'dev/worker.ts',
  'dev/api.ts',
];
/**
 * `root`: the checkout to build, this one by default, or the one `--lever-build` names (its
 * node_modules installed, or a link to these).
 */
export async function ensureCompiledService(
  logDir: string,
  log: (line: string) => void,
  root = PROJECT_ROOT,
): Promise<void> {
  // The build's last output: its modification time says when the build finished.
  const built = join(root, 'dist-dev', 'workflow-bundle.js');
  const where = root === PROJECT_ROOT ? 'dist-dev/' : join(root, 'dist-dev/');
  const newest = await newestInput(root);
  if (existsSync(built) && statSync(built).mtimeMs > newest.mtimeMs) {
    log(`${where} is up to date: the service runs compiled`);
    return;
  }
  log(
    `building ${root} (npm run build:dev): ${existsSync(built) ? `${newest.path} is newer than ${where}` : `no ${where}`} …`,
  );
  const began = Date.now();
  const { stdout, stderr } = await promisify(execFile)('npm', ['run', 'build:dev'], {
    cwd: root,
    maxBuffer: 16 * 2 ** 20,
  });
  const logFile = join(logDir, root === PROJECT_ROOT ? 'build.log' : 'build-lever.log');
  await writeFile(logFile, `${stdout}${stderr}`);
  log(`built in ${((Date.now() - began) / 1000).toFixed(1)} s (log: ${logFile})`);
}

async function newestInput(root: string): Promise<{ path: string; mtimeMs: number }> {
  let newest = { path: '', mtimeMs: 0 };
  const consider = (path: string) => {
    const { mtimeMs } = statSync(path);
    if (mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  };
  for (const file of BUILD_FILES) consider(join(root, file));
  for (const dir of BUILD_INPUTS) {
    for (const entry of await readdir(join(root, dir), { recursive: true, withFileTypes: true }))
      if (entry.isFile()) consider(join(entry.parentPath, entry.name));
  }
  return { path: relative(root, newest.path), mtimeMs: newest.mtimeMs };
}
