import { inject } from 'vitest';
import { installDebianTool, type DebianTool, type DebianToolState } from '../../dev/debian-tools.js';

export type { DebianTool, DebianToolState };

export const CHROMIUM: DebianTool = { package: 'chromium', path: '/usr/bin/chromium', neededBy: 'the browser tests' };
export const DOCKER_COMPOSE: DebianTool = {
  package: 'docker-compose',
  path: '/usr/bin/docker-compose',
  neededBy: "docker-compose.yml's `docker-compose config` check",
};

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
