import { runApi } from '../api/run-api.js';
import { assertFakesSchema, fakeFaultInjection } from './fakes/index.js';

/**
 * The API as npm start, chaos, fuzz, the bench and the tests run it: with FAULTS_ENABLED, the local
 * fakes' fault-injection endpoints mounted (the fakes' schema must then exist).
 */
await runApi({
  async faultInjection(db) {
    await assertFakesSchema(db);
    return fakeFaultInjection(db);
  },
});
