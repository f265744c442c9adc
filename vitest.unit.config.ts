import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:unit`, the edit-test loop: the `*.unit.test.ts` files, which need no database and no
 * Temporal Server (the domain, the workflow's logic with stubbed activities on the time-skipping
 * server, replay, the API's validation, the docs). `npm test` runs them too, with everything else.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/**/*.unit.test.ts'],
    globalSetup: ['test/helpers/unit-setup.ts'],
  },
});
