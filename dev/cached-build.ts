import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { logTail } from './log-tail.js';
import { StartupError } from './startup-error.js';

export type RunTool = (command: string, args: readonly string[], env?: NodeJS.ProcessEnv) => Promise<void>;

export interface CachedBuild {
  /** For messages, e.g. "Temporal CLI 1.5.1 (go install)". */
  title: string;
  /** The finished artifact's directory; it exists only once complete. */
  dir: string;
  /** Fills `workDir`, running tools through `run` so their output lands in the build log. */
  build(workDir: string, run: RunTool): Promise<void>;
}

const PROGRESS_EVERY_MS = 15_000;
/** Generous: a cold Go build takes ~4 minutes on 2 cores. */
const TOOL_TIMEOUT_MS = 30 * 60_000;

/**
 * Builds `dir` unless it exists. The build fills a temporary sibling that is renamed into place
 * only when complete, so an interrupted build never leaves a half artifact; a lock file keeps two
 * processes (e.g. `npm start` and `npm test`) from building the same thing at once.
 */
export async function buildOnce(spec: CachedBuild): Promise<void> {
  if (existsSync(spec.dir)) return;
  await mkdir(dirname(spec.dir), { recursive: true });
  const release = await acquireLock(`${spec.dir}.lock`, spec.title);
  if (existsSync(spec.dir)) return release(); // another process built it while we waited
  await removeAbandonedWorkDirs(spec.dir); // holding the lock, any work directory is a killed build's
  const workDir = `${spec.dir}.tmp-${process.pid}`;
  const logPath = `${spec.dir}.build.log`;
  const log = openSync(logPath, 'w');
  const cleanUp = () => {
    closeSync(log);
    rmSync(workDir, { recursive: true, force: true });
    release();
  };
  // If the process is stopped mid-build, leave neither the lock nor the half-built directory.
  process.once('exit', cleanUp);
  const started = Date.now();
  const progress = setInterval(
    () => console.log(`  … still building ${spec.title} (${elapsed(started)}; log: ${logPath})`),
    PROGRESS_EVERY_MS,
  );
  try {
    console.log(`Building ${spec.title} into ${spec.dir} (first run only; can take minutes). Log: ${logPath}`);
    await mkdir(workDir);
    await spec.build(workDir, (command, args, env) => runTool(command, args, env, log));
    await rename(workDir, spec.dir);
    console.log(`Built ${spec.title} in ${elapsed(started)}.`);
  } catch (err) {
    throw new StartupError(`building ${spec.title} failed: ${(err as Error).message}; ${await logTail(logPath)}`);
  } finally {
    clearInterval(progress);
    process.removeListener('exit', cleanUp);
    cleanUp();
  }
}

async function removeAbandonedWorkDirs(dir: string): Promise<void> {
  const prefix = `${basename(dir)}.tmp-`;
  for (const name of await readdir(dirname(dir))) {
    if (name.startsWith(prefix)) await rm(join(dirname(dir), name), { recursive: true, force: true });
  }
}

function runTool(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
  log: number,
): Promise<void> {
  writeFileSync(log, `$ ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, { env, stdio: ['ignore', log, log], timeout: TOOL_TIMEOUT_MS });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  return new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.removeListener('exit', killOnExit);
      if (code === 0) resolve();
      else reject(new Error(`${command} ended with ${signal ?? `exit code ${code}`}`));
    });
  });
}

async function acquireLock(lockPath: string, title: string): Promise<() => void> {
  let lastNotice = 0;
  for (;;) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readLock(lockPath));
    if (holder > 0 && !isAlive(holder)) {
      rmSync(lockPath, { force: true }); // left by a process that was killed mid-build
      continue;
    }
    if (Date.now() - lastNotice >= PROGRESS_EVERY_MS) {
      console.log(`Waiting for process ${holder}, which is building ${title} (lock: ${lockPath})`);
      lastNotice = Date.now();
    }
    await sleep(1_000);
  }
}

/** '' while the holder is between creating and writing the file, or once it has released it. */
function readLock(lockPath: string): string {
  try {
    return readFileSync(lockPath, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function elapsed(since: number): string {
  const s = Math.round((Date.now() - since) / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
