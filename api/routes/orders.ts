import { createHash, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { Router } from 'express';
import { v5 as uuidv5 } from 'uuid';
import type { Db } from '../../lib/db.js';
import type { ApiMetrics } from '../../lib/metrics.js';
import {
  cancelSignal,
  extendDeadlineUpdate,
  ORDER_WORKFLOW_TYPE,
  orderSummary,
  orderWorkflowId,
  placeOrderUpdate,
  type PlaceOrderRequest,
} from '../../workflows/messages.js';
import type { OrderLifecycle } from '../../workflows/order-lifecycle.js';
import { CustomerIdKey } from '../../workflows/search-attributes.js';
import { requireAdmin } from '../admin-auth.js';
import { businessError, parseInput } from '../errors.js';
import { jsonBody } from '../json-body.js';
import { findOrderView, listOrderViews } from '../order-view.js';
import { CreateOrderBody, ExtendBody, IdempotencyKey, ListOrdersQuery, OrderIdParam } from '../schemas.js';
import { businessCodeOf, isWorkflowGone } from '../temporal-errors.js';

/** Idempotency keys map to order ids in their own UUID namespace: the same key is the same order. */
const IDEMPOTENCY_NAMESPACE = '6f0b8f52-3a55-4c57-9a4e-2f1c1b7f3f10';

export interface OrderRouteDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  adminToken: string;
  metrics: ApiMetrics;
}

export function ordersRouter({ db, temporal, taskQueue, adminToken, metrics }: OrderRouteDeps): Router {
  const router = Router();

  router.post('/orders', jsonBody, async (req, res) => {
    const body = parseInput(CreateOrderBody, req.body);
    const key = req.get('idempotency-key');
    const idempotencyKey = key === undefined ? undefined : parseInput(IdempotencyKey, key);
    const orderId = idempotencyKey ? uuidv5(idempotencyKey, IDEMPOTENCY_NAMESPACE) : randomUUID();
    const request: PlaceOrderRequest = { orderId, ...body, idempotencyKey, requestHash: hashRequest(body) };

    // The workflow is started first and writes the order itself (update-with-start): there is no
    // moment when an order exists without the workflow that will cancel it. See README.
    const start = new WithStartWorkflowOperation<typeof OrderLifecycle>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(orderId),
      taskQueue,
      args: [{ orderId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [{ key: CustomerIdKey, value: body.customerId }],
      staticSummary: orderSummary(request),
    });
    try {
      const placed = await temporal.workflow.executeUpdateWithStart(placeOrderUpdate, { args: [request], startWorkflowOperation: start });
      metrics.ordersPlaced.inc();
      res.status(201).json({ ...placed, workflowId: orderWorkflowId(orderId) });
    } catch (err) {
      const code = businessCodeOf(err);
      if (code) throw businessError(code, (err as { details?: unknown }).details);
      throw err;
    }
  });

  router.get('/orders', async (req, res) => {
    const query = parseInput(ListOrdersQuery, req.query);
    res.json({ orders: await listOrderViews(db, query) });
  });

  router.get('/orders/:id', async (req, res) => {
    const { id } = parseInput(OrderIdParam, req.params);
    const order = await findOrderView(db, id);
    if (!order) throw businessError('UNKNOWN_ORDER');
    res.json(order);
  });

  router.post('/orders/:id/cancel', async (req, res) => {
    const { id } = parseInput(OrderIdParam, req.params);
    await requireUnpaid(db, id);
    try {
      await temporal.workflow.getHandle(orderWorkflowId(id)).signal(cancelSignal);
    } catch (err) {
      if (isWorkflowGone(err)) throw businessError('ORDER_NOT_UNPAID');
      throw err;
    }
    res.status(202).json({ id, cancelRequested: true });
  });

  router.post('/orders/:id/extend', requireAdmin(adminToken), jsonBody, async (req, res) => {
    const { id } = parseInput(OrderIdParam, req.params);
    const { minutes } = parseInput(ExtendBody, req.body);
    await requireUnpaid(db, id);
    try {
      res.json(await temporal.workflow.getHandle(orderWorkflowId(id)).executeUpdate(extendDeadlineUpdate, { args: [{ minutes }] }));
    } catch (err) {
      if (isWorkflowGone(err)) throw businessError('ORDER_NOT_UNPAID');
      const code = businessCodeOf(err);
      if (code) throw businessError(code);
      throw err;
    }
  });

  return router;
}

async function requireUnpaid(db: Db, id: string): Promise<void> {
  const order = await db.order.findUnique({ where: { id }, select: { status: true } });
  if (!order) throw businessError('UNKNOWN_ORDER');
  if (order.status !== 'UNPAID') throw businessError('ORDER_NOT_UNPAID', { status: order.status });
}

/** Same body, same hash: items are compared as a set, whatever order the client listed them in. */
function hashRequest(body: CreateOrderBody): string {
  const items = [...body.items].sort((a, b) => a.sku.localeCompare(b.sku)).map((i) => [i.sku, i.quantity]);
  return createHash('sha256').update(JSON.stringify([body.customerId, body.couponCode ?? null, items])).digest('hex');
}
