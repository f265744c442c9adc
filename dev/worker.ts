import { requireThirdParties } from '../lib/config/third-parties.js';
import { runWorker } from '../worker/run-worker.js';
import { stripePaymentProvider } from '../worker/third-parties.js';
import { assertFakesSchema, createFakeThirdParties } from './fakes/index.js';

/**
 * The worker on the local fakes, as npm start, chaos, fuzz, the bench and the tests run it. With
 * THIRD_PARTIES=fake every third party is a fake; with `stripe`, Stripe (or stripe-mock) takes the
 * payments and the fakes the rest. Either way the database needs the fakes' schema.
 */
await runWorker({
  async thirdParties(config, db) {
    const kind = requireThirdParties(config);
    await assertFakesSchema(db);
    const fakes = createFakeThirdParties(db, config.fakePayments);
    return kind === 'fake' ? fakes : { ...fakes, paymentProvider: stripePaymentProvider(config) };
  },
});
