import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { admittedUpdate, FLOOR_TASK_QUEUE, FLOOR_WORKFLOW_TYPE } from './messages.js';
import type { minimalTimer } from './workflows.js';

/** Starting the floor's runs and reading back when they closed, all through Temporal's client. */

/** One run, started as checkout starts an order's: update-with-start, the update answered at once. */
export async function startMinimalTimer(client: Client, workflowId: string, fireAtMs: number): Promise<void> {
  const start = new WithStartWorkflowOperation<typeof minimalTimer>(FLOOR_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: FLOOR_TASK_QUEUE,
    args: [fireAtMs],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  await client.workflow.executeUpdateWithStart(admittedUpdate, { startWorkflowOperation: start });
}

/** The floor's runs started since `sinceMs` (visibility's StartTime) that are still open. */
export async function openRuns(client: Client, sinceMs: number): Promise<number> {
  const { count } = await client.workflow.count(
    `WorkflowType = "${FLOOR_WORKFLOW_TYPE}" AND ExecutionStatus = "Running" AND StartTime >= "${new Date(sinceMs).toISOString()}"`,
  );
  return count;
}

/** Waits (bounded) until none of the runs started since `sinceMs` is open; true when none is. */
export async function waitUntilClosed(
  client: Client,
  sinceMs: number,
  deadline: number,
  progress: (line: string) => void,
): Promise<boolean> {
  for (let round = 0; ; round++) {
    const open = await openRuns(client, sinceMs);
    if (open === 0) return true;
    if (Date.now() > deadline) return false;
    if (round % 5 === 0) progress(`${open} floor runs still open`);
    await sleep(1_000);
  }
}

/** When each closed run started since `sinceMs` closed (ms since the epoch). */
export async function closeTimes(client: Client, sinceMs: number): Promise<number[]> {
  const times: number[] = [];
  const query = `WorkflowType = "${FLOOR_WORKFLOW_TYPE}" AND ExecutionStatus = "Completed" AND StartTime >= "${new Date(sinceMs).toISOString()}"`;
  for await (const run of client.workflow.list({ query })) if (run.closeTime) times.push(run.closeTime.getTime());
  return times;
}
