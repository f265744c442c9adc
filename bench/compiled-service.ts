import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../dev/paths.js';

/**
 * The bench runs the service as the image does: compiled, from dist/ (`npm run build`: tsc, then
 * the prebuilt workflow bundle). It builds once at its start when dist/ is missing or older than any
 * file the build reads, so a run never measures code other than the checkout's.
 */
const BUILD_INPUTS = ['api', 'worker', 'activities', 'domain', 'lib', 'workflows', 'dev/fakes', 'prisma'];
const BUILD_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** The build's last output: its modification time says when the build finished. */
const BUILT = join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');

export async function ensureCompiledService(logDir: string, log: (line: string) => void): Promise<void> {
  const newest = await newestInput();
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs > newest.mtimeMs) {
    log('dist/ is up to date: the service runs compiled');
    return;
  }
  log(
    `building the service (npm run build): ${existsSync(BUILT) ? `${newest.path} is newer than dist/` : 'no dist/'} …`,
  );
  const began = Date.now();
  const { stdout, stderr } = await promisify(execFile)('npm', ['run', 'build'], {
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 2 ** 20,
  });
  await writeFile(join(logDir, 'build.log'), `${stdout}${stderr}`);
  log(`built in ${((Date.now() - began) / 1000).toFixed(1)} s (log: ${join(logDir, 'build.log')})`);
}

async function newestInput(): Promise<{ path: string; mtimeMs: number }> {
  let newest = { path: '', mtimeMs: 0 };
  const consider = (path: string) => {
    const { mtimeMs } = statSync(path);
    if (mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  };
  for (const file of BUILD_FILES) consider(join(PROJECT_ROOT, file));
  for (const dir of BUILD_INPUTS) {
    for (const entry of await readdir(join(PROJECT_ROOT, dir), { recursive: true, withFileTypes: true }))
      if (entry.isFile()) consider(join(entry.parentPath, entry.name));
  }
  return { path: newest.path.slice(PROJECT_ROOT.length + 1), mtimeMs: newest.mtimeMs };
}
