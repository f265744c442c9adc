import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface ProcessSpec {
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Output goes to this file (appended); otherwise it shares the runner's terminal. */
  logFile?: string;
  /** Run as this user: PostgreSQL refuses to run as root. */
  user?: { uid: number; gid: number };
  /** The signal the program treats as "shut down cleanly". */
  stopSignal?: NodeJS.Signals;
  /** How long a clean shutdown may take before the whole process group is killed. */
  graceMs?: number;
}

export interface ManagedProcess {
  readonly name: string;
  /** The child's pid (also its process group's id); undefined if it could not be started. */
  readonly pid: number | undefined;
  /** Settles when the process has ended, saying how (`exit code 1`, `killed by SIGKILL`). */
  readonly exited: Promise<string>;
  stop(): Promise<void>;
  /** Kills the whole group at once, no clean shutdown (the chaos suite's crash); settles when it has ended. */
  kill(): Promise<string>;
}

/** Process groups still running; killed if the runner exits without stopping them. */
const running = new Set<number>();
process.on('exit', () => {
  for (const pgid of running) signalGroup(pgid, 'SIGKILL');
});

/**
 * Starts a long-running child in its own process group. Its own group keeps a terminal's Ctrl-C
 * away from it, so the runner alone decides the shutdown order; stopping signals the whole group,
 * so nothing the child started itself is left behind.
 */
export function startProcess(spec: ProcessSpec): ManagedProcess {
  const output = spec.logFile === undefined ? 'inherit' : openSync(spec.logFile, 'a');
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', output, output],
    ...spec.user,
  });
  if (typeof output === 'number') closeSync(output);
  const pgid = child.pid;
  if (pgid !== undefined) running.add(pgid);

  let ended = false;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => {
      ended = true;
      resolve(`could not be started: ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      ended = true;
      if (pgid !== undefined) {
        running.delete(pgid);
        signalGroup(pgid, 'SIGKILL'); // anything the child left behind in its group
      }
      resolve(signal === null ? `exit code ${code}` : `killed by ${signal}`);
    });
  });

  return {
    name: spec.name,
    pid: pgid,
    exited,
    async stop() {
      if (ended || pgid === undefined) return void (await exited);
      signalGroup(pgid, spec.stopSignal ?? 'SIGTERM');
      const timer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), spec.graceMs ?? 10_000);
      await exited;
      clearTimeout(timer);
    },
    kill() {
      if (!ended && pgid !== undefined) signalGroup(pgid, 'SIGKILL');
      return exited;
    },
  };
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we wanted.
  }
}
