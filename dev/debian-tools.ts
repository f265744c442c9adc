import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** A program that the npm registry cannot give: it comes from Debian's package (tests, the bench). */
export interface DebianTool {
  package: string;
  path: string;
  /** What needs it, for the messages. */
  neededBy: string;
}

/** The tool's executable, or why what needs it cannot run. */
export type DebianToolState = { path: string } | { skip: string };

let aptUpdated = false;

/** The tool, installed with apt-get when it is missing and this runs as root (a fresh CI machine). */
export function installDebianTool(tool: DebianTool): DebianToolState {
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
