import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildOnce } from './cached-build.js';
import { buildGoBinaries, buildKey, GO_TOOLCHAIN, requiredVersion, type GoBinary } from './go-modules.js';
import { StartupError } from './startup-error.js';
import { findExecutable, isExecutableFile, toolCacheDir } from './tool-cache.js';

/**
 * Where the Temporal servers come from. The SDK would download them from the internet; offline
 * they come from the package registries instead: Temporal Server, its SQL schema tool and the Web
 * UI server built with Go from the pinned modules in dev/go/, the Java time-skipping test server
 * assembled with Maven, and the CLI's dev server (kept for the benchmark's before/after), all
 * cached outside the clone so every clone, CI run and `npm start` reuses them.
 */

/** Pinned here; Temporal Server and the UI server are pinned by their go.mod in dev/go/. CLI 1.6+ cannot be `go install`ed (its go.mod replaces a nested module). */
export const TEMPORAL_CLI_VERSION = '1.5.1';
export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';

export const TEMPORAL_SERVER_MISSING = `no Temporal Server: install Go (1.21 or later; the build fetches the ${GO_TOOLCHAIN} toolchain itself) so it can be built`;
export const DEV_SERVER_MISSING =
  'no Temporal CLI: set TEMPORAL_CLI_PATH to a `temporal` executable, put `temporal` on PATH, or install Go so it can be built';
export const TEST_SERVER_MISSING =
  'no Temporal test server: set TEMPORAL_TEST_SERVER_PATH to an executable, or install Maven and Java so it can be assembled';

/** Dev-only knobs (the service's own settings go through lib/config/); the cache and PATH: dev/tool-cache.ts. */
function knobs() {
  const env = process.env;
  return {
    cliPath: env.TEMPORAL_CLI_PATH || undefined,
    testServerPath: env.TEMPORAL_TEST_SERVER_PATH || undefined,
    cacheDir: toolCacheDir(),
  };
}

export interface TemporalServerBinaries {
  /** `temporal-server`: every service, or the ones named with `--service`. */
  server: string;
  /** `temporal-sql-tool`: creates and upgrades the PostgreSQL schemas (embedded in it). */
  sqlTool: string;
  /** The Web UI server, the built UI embedded. */
  uiServer: string;
  /** For messages, e.g. `Temporal Server 1.32.2`. */
  title: string;
}

const SERVER_BINARIES: readonly GoBinary[] = [
  { module: 'temporal-server', pkg: 'go.temporal.io/server/cmd/server', name: 'temporal-server' },
  { module: 'temporal-server', pkg: 'go.temporal.io/server/cmd/tools/sql', name: 'temporal-sql-tool' },
  { module: 'temporal-ui-server', pkg: 'github.com/temporalio/ui-server/v2/cmd/server', name: 'temporal-ui-server' },
];

/**
 * Temporal Server, its SQL tool and the UI server: the cached build of the pinned modules, else a
 * fresh one with Go (about 5 minutes on 2 cores). undefined: no Go to build them with.
 */
export async function resolveTemporalServer(): Promise<TemporalServerBinaries | undefined> {
  const { cacheDir } = knobs();
  const serverVersion = requiredVersion('temporal-server', 'go.temporal.io/server');
  const uiVersion = requiredVersion('temporal-ui-server', 'github.com/temporalio/ui-server/v2');
  const dir = join(cacheDir, `temporal-server-${serverVersion}-ui-${uiVersion}-${buildKey(SERVER_BINARIES)}`);
  const path = (name: string) => join(dir, name);
  const binaries = {
    server: path('temporal-server'),
    sqlTool: path('temporal-sql-tool'),
    uiServer: path('temporal-ui-server'),
    title: `Temporal Server ${serverVersion}`,
  };
  if (existsSync(dir)) return binaries;
  const go = findExecutable('go');
  if (!go) return undefined;
  await buildOnce({
    title: `Temporal Server ${serverVersion}, its SQL tool and UI server ${uiVersion} (go build, ${GO_TOOLCHAIN})`,
    dir,
    build: (workDir, run) => buildGoBinaries(go, SERVER_BINARIES, workDir, run),
  });
  return binaries;
}

/**
 * The Temporal CLI (`temporal server start-dev`), for the benchmark's `--temporal cli` only:
 * TEMPORAL_CLI_PATH, else the cached build, else
 * `temporal` on PATH, else a fresh build with Go. undefined: none of these is possible (the SDK
 * may still download one when online).
 */
export async function resolveDevServer(): Promise<string | undefined> {
  const { cliPath, cacheDir } = knobs();
  if (cliPath) return executableFromEnv('TEMPORAL_CLI_PATH', cliPath);
  const dir = join(cacheDir, `temporal-cli-${TEMPORAL_CLI_VERSION}`);
  const cached = join(dir, 'temporal');
  if (existsSync(cached)) return cached;
  const onPath = findExecutable('temporal');
  if (onPath) return onPath;
  const go = findExecutable('go');
  if (!go) return undefined;
  await buildOnce({
    title: `Temporal CLI ${TEMPORAL_CLI_VERSION} (go install)`,
    dir,
    build: (workDir, run) =>
      run(go, ['install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`], {
        ...process.env,
        CGO_ENABLED: '0', // a static binary: no C toolchain needed, runs on any Linux
        GOBIN: workDir,
      }),
  });
  return cached;
}

/**
 * The Java time-skipping test server: TEMPORAL_TEST_SERVER_PATH, else the cached copy, else one
 * assembled with Maven (jars copied into the cache, so a cleaned ~/.m2 does not break it).
 * undefined: neither is possible (the SDK may still download one when online).
 */
export async function resolveTestServer(): Promise<string | undefined> {
  const { testServerPath, cacheDir } = knobs();
  if (testServerPath) return executableFromEnv('TEMPORAL_TEST_SERVER_PATH', testServerPath);
  const dir = join(cacheDir, `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`);
  const wrapper = join(dir, 'temporal-test-server');
  if (existsSync(wrapper)) return wrapper;
  const mvn = findExecutable('mvn');
  if (!mvn || !findExecutable('java')) return undefined;
  await buildOnce({
    title: `Temporal test server ${TEMPORAL_TEST_SERVER_VERSION} (Maven)`,
    dir,
    async build(workDir, run) {
      const pomDir = join(workDir, 'maven');
      await mkdir(pomDir);
      await writeFile(join(pomDir, 'pom.xml'), testServerPom());
      await run(mvn, [
        '-B',
        '-f',
        join(pomDir, 'pom.xml'),
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${join(workDir, 'lib')}`,
      ]);
      await rm(pomDir, { recursive: true });
      await writeFile(join(workDir, 'temporal-test-server'), TEST_SERVER_WRAPPER, { mode: 0o755 });
    },
  });
  return wrapper;
}

function testServerPom(): string {
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.order-lifecycle</groupId>
  <artifactId>temporal-test-server-jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEMPORAL_TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;
}

// The SDK runs `<exe> <port>` and gives the server 5 s to listen: C1-only JIT and the serial GC
// keep JVM start-up near 1 s. `exec` makes the JVM the process the SDK kills on teardown.
const TEST_SERVER_WRAPPER = `#!/bin/sh
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$(dirname "$0")/lib/*" io.temporal.testserver.TestServer "$@"
`;

function executableFromEnv(variable: string, path: string): string {
  if (!isExecutableFile(path)) throw new StartupError(`${variable}=${path}: not an executable file`);
  return path;
}
