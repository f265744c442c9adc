import { defineConfig } from 'vitest/config';

/**
 * `npm run test -w bench`: the bench's own tests (bench/test/), apart from the product's `npm test`.
 * Its verdicts on made-up runs, its options and pacer need nothing running; the Redis peer's queue
 * test starts Debian's redis-server (installed with apt-get when missing, as the bench does).
 */
export default defineConfig({
  root: import.meta.dirname,
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // Room for apt-get to install redis-server on a machine without it.
    hookTimeout: 120_000,
  },
});
