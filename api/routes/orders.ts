import { createHash } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { Router } from 'express';
import type { Db } from '../../lib/db.js';
import type { ApiMetrics } from '../metrics.js';
import {
  cancelSignal,
  extendDeadlineUpdate,
  ORDER_WORKFLOW_TYPE,
  orderLifecycleInput,
  orderSummary,
  orderWorkflowId,
  placeOrderUpdate,
  type PlaceOrderRequest,
} from '../../domain/messages.js';
import type { OrderLifecycle } from '../../workflows/order-lifecycle.js';
import { CustomerIdKey } from '../../domain/search-attributes.js';
import { actingFor, callerOf, mayReach, requireAdmin, requireCaller, type Caller } from '../auth.js';
import type { CheckoutPriority } from '../checkout-priority.js';
import type { VerifyCustomerToken } from '../customer-token.js';
import { ApiError, businessError, parseInput } from '../errors.js';
import { jsonBody } from '../json-body.js';
import { findOrderView, listOrderViews } from '../order-view.js';
import { newOrderId } from '../order-ids.js';
import { perCustomerRateLimit } from '../rate-limit.js';
import { CreateOrderBody, ExtendBody, IdempotencyKey, ListOrdersQuery, OrderIdParam } from '../schemas.js';
import { businessCodeOf, isWorkflowGone } from '../temporal-errors.js';

export interface OrderRouteDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  adminToken: string;
  verifyCustomerToken: VerifyCustomerToken;
  orderIdSecret: string;
  /** `POST /orders` calls per customer per window; 0: no limit. */
  ordersRateLimit: { limit: number; windowMs: number };
  metrics: ApiMetrics;
  checkoutPriority: CheckoutPriority;
}

export function ordersRouter(deps: OrderRouteDeps): Router {
  const { db, temporal, taskQueue, adminToken, orderIdSecret, metrics, checkoutPriority } = deps;
  const router = Router();
  const caller = requireCaller(deps);

  router.post('/orders', caller, perCustomerRateLimit(deps.ordersRateLimit), jsonBody, async (req, res) => {
    const { customerId: named, ...body } = parseInput(CreateOrderBody, req.body);
    const customerId = actingFor(callerOf(res), named);
    if (customerId === undefined) {
      throw new ApiError('VALIDATION_FAILED', undefined, {
        issues: [{ path: 'customerId', message: 'required when the admin token places the order' }],
      });
    }
    const key = req.get('idempotency-key');
    const idempotencyKey = key === undefined ? undefined : parseInput(IdempotencyKey, key);
    const orderId = newOrderId(orderIdSecret, customerId, idempotencyKey);
    const request: PlaceOrderRequest = {
      orderId,
      customerId,
      ...body,
      idempotencyKey,
      requestHash: hashRequest({ customerId, ...body }),
    };

    // The workflow is started first and writes the order itself (update-with-start): there is no
    // moment when an order exists without the workflow that will cancel it. See docs/architecture.md.
    const start = new WithStartWorkflowOperation<typeof OrderLifecycle>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(orderId),
      taskQueue,
      args: [orderLifecycleInput(orderId)],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [{ key: CustomerIdKey, value: customerId }],
      staticSummary: orderSummary(request),
      priority: checkoutPriority.atStart,
    });
    try {
      const placed = await temporal.workflow.executeUpdateWithStart(placeOrderUpdate, {
        args: [request],
        startWorkflowOperation: start,
      });
      metrics.ordersPlaced.inc();
      res.status(201).json({ ...placed, workflowId: orderWorkflowId(orderId) });
      void checkoutPriority.lower(orderWorkflowId(orderId)); // after the answer: the customer does not wait for it
    } catch (err) {
      const code = businessCodeOf(err);
      if (code) throw businessError(code, (err as { details?: unknown }).details);
      throw err;
    }
  });

  router.get('/orders', caller, async (req, res) => {
    const query = parseInput(ListOrdersQuery, req.query);
    // Without a customerId an operator lists everyone's orders; a customer, always only their own.
    res.json({
      orders: await listOrderViews(db, { ...query, customerId: actingFor(callerOf(res), query.customerId) }),
    });
  });

  router.get('/orders/:id', caller, async (req, res) => {
    const { id } = parseInput(OrderIdParam, req.params);
    const order = await findOrderView(db, id);
    if (!order || !mayReach(callerOf(res), order.customerId)) throw businessError('UNKNOWN_ORDER');
    res.json(order);
  });

  router.post('/orders/:id/cancel', caller, async (req, res) => {
    const { id } = parseInput(OrderIdParam, req.params);
    await requireUnpaid(db, id, callerOf(res));
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
    await requireUnpaid(db, id, { role: 'operator' });
    try {
      res.json(
        await temporal.workflow
          .getHandle(orderWorkflowId(id))
          .executeUpdate(extendDeadlineUpdate, { args: [{ minutes }] }),
      );
    } catch (err) {
      if (isWorkflowGone(err)) throw businessError('ORDER_NOT_UNPAID');
      const code = businessCodeOf(err);
      if (code) throw businessError(code);
      throw err;
    }
  });

  return router;
}

async function requireUnpaid(db: Db, id: string, caller: Caller): Promise<void> {
  const order = await db.order.findUnique({ where: { id }, select: { status: true, customerId: true } });
  if (!order || !mayReach(caller, order.customerId)) throw businessError('UNKNOWN_ORDER');
  if (order.status !== 'UNPAID') throw businessError('ORDER_NOT_UNPAID', { status: order.status });
}

/** Same body, same hash: items are compared as a set, whatever order the client listed them in. */
function hashRequest(body: Omit<CreateOrderBody, 'customerId'> & { customerId: string }): string {
  const items = [...body.items].sort((a, b) => a.sku.localeCompare(b.sku)).map((i) => [i.sku, i.quantity]);
  return createHash('sha256')
    .update(JSON.stringify([body.customerId, body.couponCode ?? null, items]))
    .digest('hex');
}
