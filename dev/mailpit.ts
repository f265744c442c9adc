import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce } from './cached-build.js';
import { logTail } from './log-tail.js';
import { startProcess } from './managed-process.js';
import { findFreePort, waitForPort } from './ports.js';
import { StartupError } from './startup-error.js';
import { findExecutable, toolCacheDir } from './tool-cache.js';

/**
 * Mailpit, a real SMTP server that keeps what it receives and shows it in a web UI and an HTTP API
 * (`GET /api/v1/messages`). It ships as a Go module, so offline it is built from the module proxy,
 * like stripe-mock, and cached outside the clone.
 */
export const MAILPIT_VERSION = '1.33.1';

export const MAILPIT_MISSING = 'no Mailpit: install Go (1.21 or later) so it can be built';

/** The cached Mailpit, else a fresh build with Go (under a minute to a few on 2 cores). */
export async function resolveMailpit(): Promise<string> {
  const dir = join(toolCacheDir(), `mailpit-${MAILPIT_VERSION}`);
  const binary = join(dir, 'mailpit');
  if (existsSync(binary)) return binary;
  const go = findExecutable('go');
  if (!go) throw new StartupError(MAILPIT_MISSING);
  await buildOnce({
    title: `Mailpit ${MAILPIT_VERSION} (go install)`,
    dir,
    build: (workDir, run) =>
      run(go, ['install', `github.com/axllent/mailpit@v${MAILPIT_VERSION}`], {
        ...process.env,
        CGO_ENABLED: '0', // a static binary: no C toolchain needed, runs on any Linux
        GOBIN: workDir,
      }),
  });
  return binary;
}

export interface MailpitPorts {
  /** Where it takes mail over SMTP. */
  smtp: number;
  /** Its web UI and HTTP API. */
  http: number;
}

export interface RunningMailpit {
  /** For SMTP_URL: plain SMTP on loopback, no authentication. */
  smtpUrl: string;
  /** The web UI; the HTTP API is under /api/v1. */
  httpUrl: string;
  /** Settles when it has ended, saying how. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** It listens within a second; the rest is slack for a loaded machine. */
const START_DEADLINE_MS = 15_000;

/**
 * Mailpit (built first if need be) on loopback, on the ports given or free ones. Its store is a
 * file in `dataDir` when given (kept across restarts), else a temporary one deleted at stop.
 */
export async function startMailpit(
  options: {
    ports?: MailpitPorts;
    dataDir?: string;
    logFile?: string;
    /** More of Mailpit's flags, e.g. `--smtp-allowed-recipients` to have it refuse some addresses. */
    extraArgs?: readonly string[];
  } = {},
): Promise<RunningMailpit> {
  const binary = await resolveMailpit();
  const ports = options.ports ?? { smtp: await findFreePort(), http: await findFreePort() };
  const logFile = options.logFile ?? join(tmpdir(), `mailpit-${ports.smtp}.log`);
  const database = options.dataDir === undefined ? undefined : join(options.dataDir, 'mailpit.db');
  const mailpit = startProcess({
    name: 'mailpit',
    command: binary,
    args: [
      '--smtp',
      `127.0.0.1:${ports.smtp}`,
      '--listen',
      `127.0.0.1:${ports.http}`,
      // No web UI version check or other calls out: the machine may be offline.
      '--disable-version-check',
      // Its reverse lookup of the client's address would wait on a DNS server it may not reach.
      '--smtp-disable-rdns',
      ...(options.extraArgs ?? []),
      ...(database === undefined ? [] : ['--database', database]),
    ],
    logFile,
    stopSignal: 'SIGTERM',
    graceMs: 2_000,
  });
  const listening = await Promise.race([
    Promise.all([
      waitForPort('127.0.0.1', ports.smtp, START_DEADLINE_MS),
      waitForPort('127.0.0.1', ports.http, START_DEADLINE_MS),
    ]).then((up) => up.every(Boolean)),
    mailpit.exited.then(() => false),
  ]);
  if (!listening) {
    await mailpit.stop();
    throw new StartupError(
      `Mailpit did not listen on 127.0.0.1:${ports.smtp} and :${ports.http} within ${START_DEADLINE_MS / 1000} s; ${await logTail(logFile)}`,
    );
  }
  return {
    smtpUrl: `smtp://127.0.0.1:${ports.smtp}`,
    httpUrl: `http://127.0.0.1:${ports.http}`,
    exited: mailpit.exited,
    async stop() {
      await mailpit.stop();
      // A log of our own choosing is kept only while it may explain a failure to start.
      if (options.logFile === undefined) await rm(logFile, { force: true });
    },
  };
}
