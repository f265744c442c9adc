import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { buildOnce } from '../cached-build.js';
import { installDebianTool, type DebianTool } from '../debian-tools.js';
import { StartupError } from '../startup-error.js';
import { findExecutable, toolCacheDir } from '../tool-cache.js';

/**
 * Schemathesis, the OpenAPI fuzzer, from PyPI: every package pinned in requirements.txt, installed
 * with `--no-deps` into a directory of the tool cache named by that file's hash, so a changed pin
 * is a new install and every run of one pin uses the same packages.
 */
const REQUIREMENTS = fileURLToPath(new URL('./requirements.txt', import.meta.url));

/**
 * Debian's pip, which brings Debian's python3: a fresh machine may have neither (Debian's python3
 * comes without pip), and `npm run fuzz` installs what it needs, as `npm test` does its tools.
 */
const DEBIAN_PIP: DebianTool = {
  package: 'python3-pip',
  path: '/usr/bin/pip3',
  neededBy: '`npm run fuzz` (Schemathesis comes from PyPI)',
};
const DEBIAN_PYTHON = '/usr/bin/python3';

export interface Schemathesis {
  python: string;
  /** For PYTHONPATH. */
  packages: string;
}

/** The cached install, else a fresh one from PyPI (about a minute). */
export async function resolveSchemathesis(): Promise<Schemathesis> {
  const python = pythonWithPip();
  const pins = createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex').slice(0, 10);
  const packages = join(toolCacheDir(), `schemathesis-${pins}`);
  await buildOnce({
    title: 'Schemathesis (pip install)',
    dir: packages,
    build: (workDir, run) =>
      run(python, ['-m', 'pip', 'install', '--no-deps', '--quiet', '--target', workDir, '-r', REQUIREMENTS]),
  });
  return { python, packages };
}

/**
 * The first python3 on PATH that runs pip, else Debian's, python3-pip installed with apt-get when
 * it is missing and this runs as root.
 */
export function pythonWithPip(): string {
  const python = findExecutable('python3');
  if (python !== undefined && runsPip(python)) return python;
  const debian = installDebianTool(DEBIAN_PIP);
  if ('skip' in debian) throw new StartupError(`no python3 with pip, for Schemathesis: ${debian.skip}`);
  if (!runsPip(DEBIAN_PYTHON))
    throw new StartupError(`${DEBIAN_PYTHON} -m pip fails although ${DEBIAN_PIP.package} is installed`);
  return DEBIAN_PYTHON;
}

function runsPip(python: string): boolean {
  return spawnSync(python, ['-m', 'pip', '--version'], { stdio: 'ignore', timeout: 60_000 }).status === 0;
}

/**
 * `schemathesis run …` with `args` (and a config file); resolves to its exit code. Its report goes to
 * this terminal with every line indented under a bar: Schemathesis closes with a pytest-style banner
 * (`=== 3 warnings in 15.67s ===`) that CI's log readers take for a pytest run that executed no test.
 */
export function runSchemathesis(
  { python, packages }: Schemathesis,
  args: readonly string[],
  configFile?: string,
): Promise<number> {
  const config = configFile === undefined ? [] : ['--config-file', configFile];
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', 'schemathesis.cli', ...config, 'run', ...args], {
      // It keeps a cache of what it found in its working directory: not in the checkout.
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONPATH: packages, PYTHONDONTWRITEBYTECODE: '1' },
    });
    const reports = [indentLines(child.stdout, process.stdout), indentLines(child.stderr, process.stderr)];
    child.once('error', reject);
    // 'close', not 'exit': it comes after both streams have been read to the end.
    child.once('close', (code, signal) => {
      void Promise.all(reports).then(() => resolve(code ?? (signal ? 128 : 1)));
    });
  });
}

async function indentLines(from: Readable, to: NodeJS.WritableStream): Promise<void> {
  for await (const line of createInterface({ input: from, crlfDelay: Infinity })) to.write(`  │ ${line}\n`);
}
