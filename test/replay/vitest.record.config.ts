import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/** `npm run record:histories`: the main config, running only the recorder. */
export default defineConfig({ ...base, test: { ...base.test, include: ['test/replay/*.record.ts'] } });
