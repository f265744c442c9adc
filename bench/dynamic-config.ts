import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dynamicConfigPath, type DynamicConfig } from '../dev/temporal/server.js';

/**
 * The dynamic config of the bench's server with `--dynamic KEY=VALUE` settings added: a lever tried
 * on the same stack, measured against a run without it. Written next to the run's logs, so the
 * report's reader can see exactly what the server ran on. A key the base file already sets is
 * refused rather than silently overridden (YAML keeps one of two equal keys, not both).
 */
export async function leverDynamicConfig(
  base: DynamicConfig,
  settings: Record<string, string>,
  dir: string,
): Promise<string> {
  const text = await readFile(dynamicConfigPath(base), 'utf8');
  const added = Object.entries(settings).map(([key, value]) => {
    if (!/^[A-Za-z][\w.]*$/.test(key)) throw new Error(`--dynamic: not a dynamic config key: ${key}`);
    if (new RegExp(`^${key.replace(/\./g, '\\.')}:`, 'm').test(text))
      throw new Error(`--dynamic: ${key} is set in ${dynamicConfigPath(base)} already; change it there`);
    return `${key}:\n  - value: ${value}\n`;
  });
  const file = join(dir, 'dynamic-config.bench.yaml');
  await writeFile(file, `${text}\n# Added by the bench (--dynamic)\n${added.join('')}`);
  return file;
}
