import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type { Db } from '../../lib/db.js';
import { orderWorkflowId, retryFulfillmentStepUpdate } from '../../domain/messages.js';
import { FULFILLMENT_STEPS } from '../../domain/statuses.js';
import { requireAdmin } from '../auth.js';
import { businessError, parseInput } from '../errors.js';
import { RetryStepParams } from '../schemas.js';
import { businessCodeOf, isWorkflowGone } from '../temporal-errors.js';

export function fulfillmentRouter({
  db,
  temporal,
  adminToken,
}: {
  db: Db;
  temporal: Client;
  adminToken: string;
}): Router {
  const router = Router();

  /** An operator re-drives a dead-lettered step once its cause is fixed; it then completes exactly once. */
  router.post('/orders/:id/fulfillment/:step/retry', requireAdmin(adminToken), async (req, res) => {
    const { id, step } = parseInput(RetryStepParams, req.params);
    const order = await db.order.findUnique({
      where: { id },
      select: { fulfillment: { where: { step: FULFILLMENT_STEPS[step] }, select: { status: true } } },
    });
    if (!order) throw businessError('UNKNOWN_ORDER');
    const current = order.fulfillment[0]?.status ?? null;
    if (current !== 'FAILED') throw businessError('STEP_NOT_FAILED', { step, status: current });
    try {
      const result = await temporal.workflow
        .getHandle(orderWorkflowId(id))
        .executeUpdate(retryFulfillmentStepUpdate, { args: [{ step }] });
      res.status(202).json(result);
    } catch (err) {
      if (isWorkflowGone(err)) throw businessError('STEP_NOT_FAILED', { step, status: current });
      const code = businessCodeOf(err);
      if (code) throw businessError(code, { step });
      throw err;
    }
  });

  return router;
}
