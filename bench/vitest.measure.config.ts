import { defineConfig } from 'vitest/config';
import base from '../vitest.config.js';

/** Measurements run by hand (never part of `npm test`): `npx vitest run --config bench/vitest.measure.config.ts`. */
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['bench/*.measure.ts'], testTimeout: 900_000, hookTimeout: 300_000 },
});
