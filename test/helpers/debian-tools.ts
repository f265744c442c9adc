import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { inject } from 'vitest';

/** A program some tests need that the npm registry cannot give: it comes from Debian's package. */
export interface DebianTool {
  package: string;
  path: string;
  /** What skips without it, for the message. */
  neededBy: string;
}

export const CHROMIUM: DebianTool = { package: 'chromium', path: '/usr/bin/chromium', neededBy: 'the browser tests' };
export const DOCKER_COMPOSE: DebianTool = {
  package: 'docker-compose',
  path: '/usr/bin/docker-compose',
  neededBy: "docker-compose.yml's `docker-compose config` check",
};

/** The tool's executable, or why the tests that need it must be skipped. */
export type DebianToolState = { path: string } | { skip: string };

let aptUpdated = false;

/**
 * For global setup: the tool, installed with apt-get when it is missing and this runs as root (a
 * fresh CI machine), so that `npm test` alone needs nothing installed beforehand. When it cannot be
 * had, its tests are skipped with a warning saying why, except on CI (`ci`): there a skip would pass
 * unseen, so the run fails instead.
 */
export function ensureDebianTool(tool: DebianTool, ci: boolean): DebianToolState {
  const state = installDebianTool(tool);
  if (!('skip' in state)) return state;
  if (ci) throw new Error(`CI is set and ${tool.neededBy} cannot run: ${state.skip}`);
  console.warn(`${tool.neededBy} will be skipped: ${state.skip}`);
  return state;
}

/** In a test file: the tool as global setup left it. */
export function injectedDebianTool(tool: DebianTool): DebianToolState {
  return inject('debianTools')[tool.package] ?? { skip: `global setup did not look for ${tool.package}` };
}

function installDebianTool(tool: DebianTool): DebianToolState {
  if (existsSync(tool.path)) return { path: tool.path };
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).status !== 0) {
    return {
      skip: `${tool.path} is missing and cannot be installed here (needs root and apt-get): apt-get install -y ${tool.package}`,
    };
  }
  console.log(`Installing Debian's ${tool.package} for ${tool.neededBy} (apt-get install -y ${tool.package}) …`);
  const steps = [...(aptUpdated ? [] : [['update']]), ['install', '-y', '--no-install-recommends', tool.package]];
  for (const args of steps) {
    const run = spawnSync('apt-get', args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 15 * 60_000,
    });
    if (run.status !== 0)
      return {
        skip: `apt-get ${args.join(' ')} failed: ${run.stderr?.toString().trim().split('\n').at(-1) ?? run.signal}`,
      };
    if (args[0] === 'update') aptUpdated = true;
  }
  return existsSync(tool.path)
    ? { path: tool.path }
    : { skip: `apt-get installed ${tool.package} but ${tool.path} is missing` };
}
