import { defineUpdate } from '@temporalio/workflow';

/**
 * Temporal's floor (bench/floor/): the least a workflow with a durable deadline costs on this
 * server. Its names, shared by the floor's workflow, its worker and its driver.
 */
export const FLOOR_WORKFLOW_TYPE = 'minimalTimer';
/** A task queue of its own: the floor's worker never takes an order's tasks, nor the reverse. */
export const FLOOR_TASK_QUEUE = 'bench-floor';
/** The floor's Worker Deployment, as the service's workers have theirs (TEMPORAL_DEPLOYMENT_NAME). */
export const FLOOR_DEPLOYMENT = 'bench-floor';
/** The update a run is started with (update-with-start, as checkout starts an order's run). */
export const admittedUpdate = defineUpdate<void>('admitted');
