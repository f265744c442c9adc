import type { Db } from '../../lib/db.js';
import type { ActivityDeps } from '../deps.js';
import { FakeFaults } from './faults.js';
import { FakeInvoiceService, FakeLoyaltyService } from './fulfillment-services.js';
import { FakeNotifier } from './notifier.js';
import { FakePaymentProvider } from './payment-provider.js';
import { FakeRecorder } from './recorder.js';

export type ThirdParties = Pick<ActivityDeps, 'paymentProvider' | 'notifier' | 'invoices' | 'loyalty'>;

/**
 * The third parties this service talks to. Only local fakes exist so far: a deployment that
 * takes real money plugs its provider clients in here.
 */
export function createThirdParties(db: Db): ThirdParties {
  const recorder = new FakeRecorder(db, new FakeFaults(db));
  return {
    paymentProvider: new FakePaymentProvider(recorder),
    notifier: new FakeNotifier(recorder),
    invoices: new FakeInvoiceService(recorder),
    loyalty: new FakeLoyaltyService(recorder),
  };
}
