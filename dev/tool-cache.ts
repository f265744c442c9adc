import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * Where the tools the project builds for itself (Temporal's servers, stripe-mock) are found and
 * kept: a cache outside the clone, so every clone, worktree, CI run and `npm start` reuses one
 * build. Dev-only knobs, read here rather than through lib/config/, which holds the service's
 * own settings.
 */
export function toolCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'order-lifecycle');
}

/** The first executable file called `name` on PATH. */
export function findExecutable(name: string): string | undefined {
  const searchPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return searchPath.map((dir) => join(dir, name)).find(isExecutableFile);
}

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
