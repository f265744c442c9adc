import type { PaymentProvider, ThirdParties } from '../adapters/ports/index.js';
import { createStripeClient } from '../adapters/stripe/client.js';
import { StripePaymentProvider } from '../adapters/stripe/payment-provider.js';
import type { Config } from '../lib/config/index.js';
import { requireThirdParties, type FakePaymentsMode } from '../lib/config/third-parties.js';
import type { Db } from '../lib/db.js';
import { importOptionalModule } from '../lib/optional-module.js';

/** What the worker loads dev/fakes for (test/infra/production-imports.test.ts holds the module to it). */
export interface FakesForWorker {
  assertFakesSchema(db: Db): Promise<void>;
  createFakeThirdParties(db: Db, payments: FakePaymentsMode): ThirdParties;
}

/**
 * Held in a variable, which neither tsc nor the production build follows: the service compiles and
 * runs without dev/ as long as THIRD_PARTIES is not `fake`. tsconfig.build.json compiles dev/fakes
 * when it is there. Lint forbids such a path in production; this one is allowed by name, and
 * taking the fakes out of production is its own issue.
 */
// eslint-disable-next-line no-restricted-syntax -- a known way in to dev/fakes (docs/architecture.md)
const FAKES_MODULE = new URL('../dev/fakes/index.js', import.meta.url);
const NO_FAKES_IN_BUILD =
  'THIRD_PARTIES: this build has no local fakes, which stand in for the notifier, invoicing and loyalty (dev/fakes is left out with dev/); ' +
  'build from a checkout with dev/ (`npm run build` compiles dev/fakes in, as the image does)';

/** The payment provider on Stripe (THIRD_PARTIES=stripe's settings). */
export function stripePaymentProvider(config: Config): PaymentProvider {
  const stripe = config.stripe!;
  return new StripePaymentProvider(createStripeClient(stripe), {
    paymentMethods: stripe.paymentMethods,
    awaitingFundsMaxMs: config.paymentHolds.awaitingFundsMaxMs,
    connectAccount: stripe.connectAccount ?? null,
  });
}

/**
 * The third parties the activities call, as THIRD_PARTIES says; without it the worker refuses to
 * start. `stripe` is the payment provider on Stripe; the notifier, invoicing and loyalty have no
 * real client yet, so the local fakes stand in for them with either choice.
 */
export async function loadThirdParties(config: Config, db: Db): Promise<ThirdParties> {
  const kind = requireThirdParties(config);
  const fakes = await importOptionalModule<FakesForWorker>(FAKES_MODULE, NO_FAKES_IN_BUILD);
  await fakes.assertFakesSchema(db);
  const local = fakes.createFakeThirdParties(db, config.fakePayments);
  if (kind === 'fake') return local;
  return { ...local, paymentProvider: stripePaymentProvider(config) };
}
