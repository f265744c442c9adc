import { log } from '@temporalio/workflow';
import type { ProviderSweepResult } from '../activities/provider-sweep.js';
import type { ProviderSweepInput } from '../domain/messages.js';
import { providerSweep } from './activity-proxies.js';

/**
 * One provider sweep; a Temporal Schedule starts it every PROVIDER_SWEEP_EVERY (see worker/). It
 * goes on from the cursor the last one left in the database.
 */
export async function SweepProviderEvents(input: ProviderSweepInput): Promise<ProviderSweepResult> {
  try {
    return await providerSweep.sweepProviderEvents(input);
  } catch (err) {
    log.warn('provider sweep failed: a lost event waits until the next one', { error: String(err) });
    throw err;
  }
}
