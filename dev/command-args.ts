import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseDuration } from '../lib/duration.js';
import { StartupError } from './startup-error.js';

/**
 * node:util's parseArgs for a dev command: an unknown option, a missing value or a stray argument
 * is a StartupError (one line, with the command's usage), not a stack trace.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    if (String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_'))
      throw new StartupError(`${(err as Error).message}; usage: ${usage}`);
    throw err;
  }
}

/** A duration option's value in milliseconds; a bad one is a StartupError naming the option, with the usage. */
export function durationOption(option: string, text: string, usage: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new StartupError(`--${option}: ${(err as Error).message}; usage: ${usage}`);
  }
}
