import type { ThirdParties } from '../../activities/third-party/index.js';
import type { DevRoutes } from '../../api/app.js';
import type { Db } from '../../lib/db.js';
import { FAULT_ENDPOINTS } from './fault-endpoints.js';
import { FakeFaults } from './faults.js';
import { faultsRouter } from './faults-router.js';
import { FakeInvoiceService, FakeLoyaltyService } from './fulfillment-services.js';
import { FakeNotifier } from './notifier.js';
import { FakePaymentProvider } from './payment-provider.js';
import { FakeRecorder } from './recorder.js';

/**
 * The local fakes of every third party, recording in the database (the `fakes` schema) and obeying
 * the injected faults.
 */
export function createFakeThirdParties(db: Db): ThirdParties {
  const recorder = new FakeRecorder(db, new FakeFaults(db));
  return {
    paymentProvider: new FakePaymentProvider(recorder),
    notifier: new FakeNotifier(recorder),
    invoices: new FakeInvoiceService(recorder),
    loyalty: new FakeLoyaltyService(recorder),
  };
}

/** `PUT`/`DELETE /admin/faults/:service` on the fakes of `db`, with their OpenAPI entries, for createApp. */
export function fakeFaultInjection(db: Db, adminToken: string): DevRoutes {
  return { router: faultsRouter({ faults: new FakeFaults(db), adminToken }), endpoints: FAULT_ENDPOINTS };
}

