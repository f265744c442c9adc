import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { pythonWithPip } from '../../dev/fuzz/schemathesis.js';

/**
 * `npm run fuzz` on a machine whose python3 has no pip (Debian's, without python3-pip): the only
 * python3 on PATH is a stand-in that fails `-m pip`, and PATH has no apt-get, so nothing is installed.
 */
const dir = mkdtempSync(join(tmpdir(), 'python-without-pip-'));
const pipless = join(dir, 'python3');
writeFileSync(pipless, '#!/bin/sh\necho "No module named pip" >&2\nexit 1\n');
chmodSync(pipless, 0o755);
const debianHasPip = existsSync('/usr/bin/pip3');

afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

it.runIf(debianHasPip)("passes over a python3 without pip for Debian's, which has it", () => {
  vi.stubEnv('PATH', dir);
  const python = pythonWithPip();
  expect(python).toBe('/usr/bin/python3');
  expect(spawnSync(python, ['-m', 'pip', '--version']).status).toBe(0);
});

it.skipIf(debianHasPip)('names the Debian package to install when it cannot install it itself', () => {
  vi.stubEnv('PATH', dir);
  expect(() => pythonWithPip()).toThrow(/^no python3 with pip, for Schemathesis: .*apt-get install -y python3-pip$/);
});
