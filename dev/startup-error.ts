import { ConfigError } from '../lib/config/env.js';

/** A problem the user can fix (bad setting, port taken, tool missing): reported as one line, no stack. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/**
 * Runs a dev command's main function. Expected problems print only their message; anything else
 * is a bug in the tooling and keeps its stack trace.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    if (err instanceof StartupError || err instanceof ConfigError) {
      console.error(`error: ${err.message}`);
    } else {
      console.error(err);
    }
    process.exit(1);
  });
}
