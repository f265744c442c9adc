import type { ThirdParties } from '../../adapters/ports/index.js';
import type { FaultInjection } from '../../api/app.js';
import { withDeps } from '../../api/endpoint.js';
import { ConfigError } from '../../lib/config/env.js';
import type { FakePaymentsMode } from '../../lib/config/third-parties.js';
import type { Db } from '../../lib/db.js';
import { FAULT_ENDPOINTS } from './fault-endpoints.js';
import { FakeFaults } from './faults.js';
import { FakeInvoiceService, FakeLoyaltyService } from './fulfillment-services.js';
import { FakeNotifier } from './notifier.js';
import { FakePaymentProvider } from './payment-provider.js';
import { FakeRecorder } from './recorder.js';
import { hasFakesSchema } from './schema.js';

/**
 * The local fakes of every third party, recording in the database (the `fakes` schema) and obeying
 * the injected faults. Only the local stack's entries (dev/worker.ts, dev/api.ts) and the tests
 * wire them: the service's own entries know nothing of them.
 */
export function createFakeThirdParties(db: Db, payments: FakePaymentsMode): ThirdParties {
  const recorder = new FakeRecorder(db, new FakeFaults(db));
  return {
    paymentProvider: new FakePaymentProvider(recorder, db, payments),
    notifier: new FakeNotifier(recorder),
    invoices: new FakeInvoiceService(recorder),
    loyalty: new FakeLoyaltyService(recorder),
  };
}

/** The fault-injection endpoints on the fakes of `db`, for createApp. */
export function fakeFaultInjection(db: Db): FaultInjection {
  return { endpoints: withDeps(FAULT_ENDPOINTS, { faults: new FakeFaults(db) }) };
}

/**
 * One line at start-up rather than every fake call failing on a missing table. Only a database that
 * answers counts: one that is unreachable now is waited out by the activities' retries, as always.
 */
export async function assertFakesSchema(db: Db): Promise<void> {
  const present = await hasFakesSchema(db).catch(() => undefined);
  if (present === false) {
    throw new ConfigError(
      'THIRD_PARTIES=fake, but the database has no `fakes` schema: create it with `npm run db:fakes` (npm start, chaos and bench do it themselves)',
    );
  }
}
