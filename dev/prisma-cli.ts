import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './paths.js';
import { StartupError } from './startup-error.js';

const PRISMA = join(PROJECT_ROOT, 'node_modules', '.bin', 'prisma');

/**
 * Runs the project's Prisma CLI and returns its standard output. prisma.config.ts connects its
 * migration adapter to DATABASE_URL, so commands that touch a database need `databaseUrl`.
 */
export async function runPrisma(args: readonly string[], options: { databaseUrl?: string } = {}): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    // The Rust-free client uses no query engine, but the CLI tries to download one (offline:
    // fatal) unless told where it is; it never loads it.
    PRISMA_QUERY_ENGINE_LIBRARY: '/dev/null',
  };
  if (options.databaseUrl !== undefined) env.DATABASE_URL = options.databaseUrl;
  try {
    const { stdout } = await promisify(execFile)(PRISMA, args, { cwd: PROJECT_ROOT, env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    // Prisma repeats its warnings on both streams; the error itself is on stderr.
    const output = stderr?.trim() || stdout?.trim() || (err as Error).message;
    throw new StartupError(`prisma ${args.slice(0, 2).join(' ')} failed:\n${output}`);
  }
}
