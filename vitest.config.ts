import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Binaries, the Prisma client and one PostgreSQL for the whole run (a cold machine builds the
    // Temporal servers here first, for minutes, with progress printed).
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-temporal-logs.ts'],
    reporters: ['default', './test/helpers/closing-line-reporter.ts'],
    // Separate processes: Temporal workers load a native module, which worker threads handle badly.
    pool: 'forks',
    // Files that start a Temporal test server give it only 5 s (fixed by the SDK) to listen; on a
    // 2-core machine more than two starting at once risks missing that.
    maxWorkers: 2,
    // Integration tests run real servers.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
