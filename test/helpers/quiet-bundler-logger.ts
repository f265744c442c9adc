/** The workflow bundler's logger for tests: its progress lines muted, its warnings and errors kept. */
export const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, meta?: unknown) => console.warn(message, meta),
  error: (message: string, meta?: unknown) => console.error(message, meta),
  log: () => undefined,
};
