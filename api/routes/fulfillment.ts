import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import { storedStep } from '../../store/fulfillment-steps.js';
import { orderWorkflowId, retryFulfillmentStepUpdate } from '../../domain/messages.js';
import type { ApiHandler } from '../endpoint-table.js';
import { businessError } from '../errors.js';
import { callTemporal } from '../temporal-errors.js';

/** An operator re-drives a dead-lettered step once its cause is fixed; it then completes exactly once. */
export const retryFulfillmentStep: ApiHandler<'retryFulfillmentStep', { db: Db; temporal: Client }> = async (
  { params: { id, step } },
  { db, temporal },
) => {
  const order = await db.order.findUnique({
    where: { id },
    select: { fulfillment: { where: { step: storedStep(step) }, select: { status: true } } },
  });
  if (!order) throw businessError('UNKNOWN_ORDER');
  const current = order.fulfillment[0]?.status ?? null;
  if (current !== 'FAILED') throw businessError('STEP_NOT_FAILED', { step, status: current });
  return callTemporal(
    () =>
      temporal.workflow.getHandle(orderWorkflowId(id)).executeUpdate(retryFulfillmentStepUpdate, { args: [{ step }] }),
    // The database said FAILED a moment ago: the workflow has moved on since (or ended).
    { whenGone: 'STEP_NOT_FAILED', details: { step } },
  );
};
