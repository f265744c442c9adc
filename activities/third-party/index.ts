import type { Db } from '../../lib/db.js';
import type { ActivityDeps } from '../deps.js';
import { FakeNotifier } from './notifier.js';
import { FakePaymentProvider } from './payment-provider.js';
import { FakeRecorder } from './recorder.js';

/**
 * The third parties this service talks to. Only local fakes exist so far: a deployment that
 * takes real money plugs its provider clients in here.
 */
export function createThirdParties(db: Db): Pick<ActivityDeps, 'paymentProvider' | 'notifier'> {
  const recorder = new FakeRecorder(db);
  return { paymentProvider: new FakePaymentProvider(recorder), notifier: new FakeNotifier(recorder) };
}
