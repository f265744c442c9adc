import type { Prisma } from '@prisma/client';
import type { Db } from '../lib/db.js';
import {
  FULFILLMENT_STEPS,
  INITIAL_STATUS,
  isUnpaid,
  type FulfillmentStep,
  type StepStatus,
} from '../domain/statuses.js';
import { storedStep } from '../store/fulfillment-steps.js';
import { orderWorkflowId } from '../domain/messages.js';
import type { OrderView } from './responses.js';

const include = {
  items: { orderBy: { sku: 'asc' } },
  payments: { orderBy: { receivedAt: 'asc' } },
  fulfillment: true,
} satisfies Prisma.OrderInclude;
type OrderRow = Prisma.OrderGetPayload<{ include: typeof include }>;

export async function findOrderView(db: Db, id: string): Promise<OrderView | null> {
  const [row, now] = await Promise.all([db.order.findUnique({ where: { id }, include }), databaseNow(db)]);
  return row ? toView(row, now) : null;
}

export async function listOrderViews(
  db: Db,
  filter: { status?: OrderRow['status'] | undefined; customerId?: string | undefined; limit: number },
): Promise<OrderView[]> {
  const where: Prisma.OrderWhereInput = {};
  if (filter.status) where.status = filter.status;
  if (filter.customerId) where.customerId = filter.customerId;
  const [rows, now] = await Promise.all([
    db.order.findMany({ where, include, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], take: filter.limit }),
    databaseNow(db),
  ]);
  return rows.map((row) => toView(row, now));
}

/** The deadline is judged by the database's clock, the same one the guarded updates use. */
async function databaseNow(db: Db): Promise<Date> {
  const [row] = await db.$queryRaw<Array<{ now: Date }>>`SELECT now() AS now`;
  return row!.now;
}

/** What GET /orders and GET /orders/:id answer with; its shape is documented in api/responses.ts. */
function toView(row: OrderRow, now: Date): OrderView {
  const stepStatus = (step: FulfillmentStep): StepStatus =>
    row.fulfillment.find((f) => f.step === storedStep(step))?.status ?? INITIAL_STATUS.step;
  // An order past its deadline, or whose payment is being closed, is never offered for payment,
  // even before the cancel has landed.
  const payable = isUnpaid(row.status) && row.expiresAt > now && row.closingSince === null;
  return {
    id: row.id,
    customerId: row.customerId,
    status: row.status,
    payable,
    totalCents: row.totalCents,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    paidAt: row.paidAt?.toISOString() ?? null,
    cancelledAt: row.cancelledAt?.toISOString() ?? null,
    cancelReason: row.cancelReason,
    items: row.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unitPriceCents: i.unitPriceCents })),
    couponCode: row.couponCode,
    workflowId: orderWorkflowId(row.id),
    // What pays the order is handed out only while it may be paid: a secret served for a cancelled
    // or paid order would let the customer pay it, for a refund at the shop's cost.
    payment:
      payable && row.providerPaymentId
        ? { paymentId: row.providerPaymentId, clientSecret: row.paymentClientSecret! }
        : null,
    payments: row.payments.map((p) => ({
      paymentId: p.paymentId,
      amountCents: p.amountCents,
      status: p.status,
      // Why the provider rejected the refund (REFUND_FAILED until an operator retries it).
      ...(p.refundError === null ? {} : { refundError: p.refundError }),
    })),
    // Fulfillment only starts once an order is paid; before that there is nothing to show.
    fulfillment:
      row.status === 'PAID'
        ? (Object.fromEntries(FULFILLMENT_STEPS.map((step) => [step, stepStatus(step)])) as Record<
            FulfillmentStep,
            StepStatus
          >)
        : null,
  };
}
