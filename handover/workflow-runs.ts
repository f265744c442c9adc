import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/** Whether any of these workflows has a run that is still running (one never started is not). */
export async function anyRunning(client: Client, workflowIds: readonly string[]): Promise<boolean> {
  for (const workflowId of workflowIds) if (await isRunning(client.workflow.getHandle(workflowId))) return true;
  return false;
}

export async function isRunning(handle: { describe(): Promise<{ status: { name: string } }> }): Promise<boolean> {
  try {
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
