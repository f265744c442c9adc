import { allHandlersFinished, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { ContinuedRun, OrderLifecycleInput } from '../domain/messages.js';
import type { OrderLifecycle } from './order-lifecycle.js';

/**
 * A run continues as new once its history has this many events: well under Temporal's 10,240-event
 * warning, and small enough that a worker replaying the run (after a restart, or to answer a query
 * of a run out of its cache) reads little. A provider that cannot answer at the closing costs
 * 6 rounds of some 6 events an hour once the backoff reaches its cap (workflows/backoff.ts), so a
 * run held by one continues about once a day; an outage of ours writes nothing while it lasts
 * (workflows/keep-trying.ts).
 */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 1_000;

/**
 * Whether the run should continue as new now: its history is long (or the server suggests it), or
 * a newer build of the workers has become current while it waits, so that an order held for days
 * moves onto the current build instead of keeping an old build's workers needed.
 */
export function continuingIsDue(): boolean {
  const info = workflowInfo();
  return (
    info.historyLength >= CONTINUE_AS_NEW_AFTER_EVENTS ||
    info.continueAsNewSuggested ||
    info.targetWorkerDeploymentVersionChanged
  );
}

/**
 * Ends this run and starts the order's next one, which reads the order again from the database
 * (the path an adopting run takes) and takes over `continued`. Only at a safe point: no handler
 * is running and no payment is being settled, so every payment the run accepted is settled and
 * none is carried. The next run starts on
 * the deployment's current build (AUTO_UPGRADE for its first task), then is pinned to it like any
 * run (worker/deployment.ts).
 */
export async function continueAsNewIfDue(
  orderId: string,
  { paymentsIdle, continued }: { paymentsIdle: boolean; continued: () => ContinuedRun },
): Promise<void> {
  if (!continuingIsDue() || !allHandlersFinished() || !paymentsIdle) return;
  const input: OrderLifecycleInput = { orderId, adopt: true, continued: continued() };
  await makeContinueAsNewFunc<typeof OrderLifecycle>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(input);
}
