import { ConfigError } from './config/env.js';

/**
 * Imports a module that a build may leave out (dev/fakes, when the compiled service is built or
 * copied without dev/), from a URL held in a variable so that neither tsc nor the production build
 * follows it. That module missing is a ConfigError with `whenMissing`, one line saying what is
 * wrong and what to do; anything else (a module it imports missing) is a broken build and keeps its stack.
 */
export async function importOptionalModule<T>(module: URL, whenMissing: string): Promise<T> {
  try {
    return (await import(module.href)) as T;
  } catch (err) {
    const { code, url } = err as { code?: unknown; url?: unknown };
    if (code === 'ERR_MODULE_NOT_FOUND' && url === module.href) throw new ConfigError(whenMissing);
    throw err;
  }
}
