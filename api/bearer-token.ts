/**
 * api/auth.ts's import of the rule, which lives in lib/ since the worker's /metrics reads the header
 * with it too.
 */
export { bearerTokenOf } from '../lib/bearer-tokens.js';
