import type { Client, WorkflowHandle } from '@temporalio/client';
import { orderWorkflowId } from '../domain/messages.js';
import { isUnpaid, type OrderStatus } from '../domain/statuses.js';
import type { Db } from '../lib/db.js';
import { mayReach, type Caller } from './auth.js';
import { businessError } from './errors.js';
import { callTemporal } from './temporal-errors.js';

/**
 * Acts on an order's workflow only while the order is still unpaid (domain/statuses.ts says which
 * statuses count): the one check before the call. An order the caller may not reach is 404
 * UNKNOWN_ORDER, as if it did not exist; one that is no longer unpaid is 409 ORDER_NOT_UNPAID with
 * its status; and so is one whose workflow has ended by the time the call reaches it, or whose
 * guarded statement, which decides a race, finds it paid or cancelled meanwhile.
 */
export async function whileUnpaid<T>(
  { db, temporal }: { db: Db; temporal: Client },
  id: string,
  caller: Caller,
  act: (workflow: WorkflowHandle) => Promise<T>,
  /** Which orders the call is for: unpaid ones, unless it also acts on an order whose money is on its way (isOpen). */
  accepts: (status: OrderStatus) => boolean = isUnpaid,
): Promise<T> {
  const order = await db.order.findUnique({ where: { id }, select: { status: true, customerId: true } });
  if (!order || !mayReach(caller, order.customerId)) throw businessError('UNKNOWN_ORDER');
  if (!accepts(order.status)) throw businessError('ORDER_NOT_UNPAID', { status: order.status });
  return callTemporal(() => act(temporal.workflow.getHandle(orderWorkflowId(id))), { whenGone: 'ORDER_NOT_UNPAID' });
}
