import { join } from 'node:path';
import { build } from 'esbuild';
import { PROJECT_ROOT } from '../dev/paths.js';

/**
 * A child process of the bench's own (Temporal's floor worker, a peer) compiled to one JavaScript
 * file and run by plain `node`, as the compiled service runs. Not through tsx: tsx turns Node's
 * source maps on in the process and in its worker threads, and then every `Error().stack` (the
 * workflow sandbox takes one per promise) pays for the mapping, which the service in dist/ does not.
 * Packages stay imports; the output sits under node_modules/.cache so that they resolve.
 */
const OUT_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'order-lifecycle-bench');

/** `entry` relative to the project root (`bench/floor/worker-main.ts`); returns the compiled file. */
export async function compileBenchEntry(entry: string): Promise<string> {
  const outfile = join(OUT_DIR, `${entry.replaceAll('/', '-').replace(/\.ts$/, '')}.mjs`);
  await build({
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}
