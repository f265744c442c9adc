import type { Db } from '../../lib/db.js';
import type { ApiHandler } from '../endpoint-table.js';

/** Money the provider took for no order of ours (store/unclaimed-payments.ts), newest first, for an operator. */
export const listUnclaimedPayments: ApiHandler<'listUnclaimedPayments', { db: Db }> = async (
  { query: { status, limit } },
  { db },
) => {
  const rows = await db.unclaimedPayment.findMany({
    where: status === undefined ? {} : { status },
    orderBy: [{ receivedAt: 'desc' }, { paymentId: 'asc' }],
    take: limit,
  });
  return {
    payments: rows.map((p) => ({
      paymentId: p.paymentId,
      namedOrder: p.namedOrder,
      amountCents: p.amountCents,
      currency: p.currency,
      livemode: p.livemode,
      connectAccount: p.connectAccount,
      status: p.status,
      receivedAt: p.receivedAt.toISOString(),
      refundDueAt: p.refundDueAt.toISOString(),
      refundRef: p.refundRef,
      refundError: p.refundError,
    })),
  };
};
