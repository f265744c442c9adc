import { runApi } from './run-api.js';

/** The API as the image runs it (`node dist/api/server.js`): no fault injection. */
await runApi();
