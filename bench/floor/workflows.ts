import { setHandler, sleep } from '@temporalio/workflow';
import { admittedUpdate } from './messages.js';

/**
 * The floor: started by update-with-start, one durable timer until `fireAtMs`, then it completes.
 * No activities, no search attributes: what any workflow with a deadline pays Temporal at least.
 */
export async function minimalTimer(fireAtMs: number): Promise<void> {
  setHandler(admittedUpdate, () => undefined);
  // Workflow time is the task's start: deterministic. A timer needs a positive duration.
  await sleep(Math.max(1, fireAtMs - Date.now()));
}
