import { z } from 'zod';
import { parseDuration } from '../duration.js';

/**
 * How a variable is read: every section of the configuration parses its variables with parseEnv, so
 * a bad value stops start-up with a ConfigError whose one line names the variable (never its value).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const port = z.coerce.number().int().min(1).max(65_535);
export const nonEmpty = z.string().trim().min(1);
/** A limit where 0 means "off". */
export const limit = z.coerce.number().int().min(0).max(1_000_000);

/** The hosts plain http may reach: this machine only. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

export function parseEnv<T extends z.ZodObject>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schema.safeParse(blankToUndefined(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}

/** A duration variable in milliseconds, through lib/duration.ts, its error naming the variable. */
export function duration(name: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
}

/** A bound that 0 would turn off (pg reads 0 as "no timeout"): at least 1 ms. */
export function positiveDuration(name: string, text: string): number {
  const ms = duration(name, text);
  if (ms < 1) throw new ConfigError(`${name}: must be more than 0`);
  return ms;
}

/** `FOO=` in a shell or compose file means "not set", not "set to the empty string". */
function blankToUndefined(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' ? undefined : v]));
}
