import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunTool } from './cached-build.js';
import { PROJECT_ROOT } from './paths.js';

/**
 * The pinned Go wrapper modules in dev/go/: each go.mod (with its go.sum) is the one place a Go
 * binary's version is pinned, and the cache key of its build.
 */

/**
 * Temporal Server 1.31+ and its UI server need Go ≥ 1.26.10. Exported to every build, so a machine
 * with an older Go (≥ 1.21, which can switch toolchains) fetches this one from the module proxy.
 */
export const GO_TOOLCHAIN = 'go1.27.3';

export interface GoBinary {
  /** dev/go/<module>: the wrapper module that pins the package's version. */
  module: string;
  /** The main package, one of the module's `tool` lines. */
  pkg: string;
  /** The file name in the cache. */
  name: string;
}

const moduleDir = (module: string) => join(PROJECT_ROOT, 'dev', 'go', module);

/** The version a wrapper module requires of `path`, e.g. `1.32.2`. */
export function requiredVersion(module: string, path: string): string {
  const goMod = readFileSync(join(moduleDir(module), 'go.mod'), 'utf8');
  const version = new RegExp(`^\\s*${path.replaceAll('.', '\\.')} v(\\S+)`, 'm').exec(goMod)?.[1];
  if (version === undefined) throw new Error(`dev/go/${module}/go.mod does not require ${path}`);
  return version;
}

/** Changes whenever a pin, the toolchain or the set of binaries changes: a new cache entry, a rebuild. */
export function buildKey(binaries: readonly GoBinary[]): string {
  const hash = createHash('sha256').update(GO_TOOLCHAIN);
  for (const module of new Set(binaries.map((b) => b.module))) {
    for (const file of ['go.mod', 'go.sum']) hash.update(readFileSync(join(moduleDir(module), file)));
  }
  for (const { pkg, name } of binaries) hash.update(`${pkg}=${name}`);
  return hash.digest('hex').slice(0, 10);
}

/** `go build`s each binary into `outDir`: static (no C toolchain needed), with the pinned toolchain. */
export async function buildGoBinaries(
  go: string,
  binaries: readonly GoBinary[],
  outDir: string,
  run: RunTool,
): Promise<void> {
  const env = { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, CGO_ENABLED: '0' };
  for (const { module, pkg, name } of binaries) {
    await run(go, ['-C', moduleDir(module), 'build', '-trimpath', '-o', join(outDir, name), pkg], env);
  }
}
