import { Prisma } from '@prisma/client';
import type {
  CouponStatus,
  OrderStatus,
  PaymentStatus,
  StepStatus,
  Transition,
  UnclaimedStatus,
  WebhookDeliveryStatus,
} from '../domain/statuses.js';

/**
 * The one way this service writes a status: `SET status = <to>` only `WHERE status = ANY(<from>)`,
 * both from one transition of the domain's tables (domain/statuses.ts). The row count then says
 * whether the move happened — who won a race. test/store/guarded-writes.test.ts fails on any
 * status written another way.
 *
 * SQL or Prisma's API? Activities build their SQL with these helpers (Prisma.sql: values always
 * bound) and run it on node-postgres directly (lib/sql.ts): they are the hot path, and Prisma's
 * client costs several times the CPU per statement. A decision and what follows from it for the
 * winner go into one statement where they can (the guarded cancel with its releases, the guarded pay
 * with sale, redemption and capture). Elsewhere (the API's reads and catalog writes, operator tools)
 * Prisma's API for plain reads and writes that decide nothing, raw SQL where arithmetic must happen
 * in one statement.
 */
interface StatusOf {
  orders: OrderStatus;
  payments: PaymentStatus;
  coupons: CouponStatus;
  fulfillment_steps: StepStatus;
  unclaimed_payments: UnclaimedStatus;
  webhook_deliveries: WebhookDeliveryStatus;
}
type StatusTable = keyof StatusOf;

/** The PostgreSQL enum of each table's status column (prisma/schema.prisma). */
const ENUM_OF: Record<StatusTable, string> = {
  orders: '"OrderStatus"',
  payments: '"PaymentStatus"',
  coupons: '"CouponStatus"',
  fulfillment_steps: '"StepStatus"',
  unclaimed_payments: '"UnclaimedStatus"',
  webhook_deliveries: '"WebhookDeliveryStatus"',
};

/** `UPDATE <table> SET ${move.set}, … WHERE … AND ${move.guard}`. */
export function statusMove<T extends StatusTable>(
  table: T,
  transition: Transition<StatusOf[T]>,
): { set: Prisma.Sql; guard: Prisma.Sql } {
  return {
    set: Prisma.sql`status = ${transition.to}::${Prisma.raw(ENUM_OF[table])}`,
    guard: statusIn(table, transition.from),
  };
}

/** `status = ANY(<statuses>)`: a condition on a row's status, in reads and alongside writes. */
export function statusIn<T extends StatusTable>(table: T, statuses: readonly StatusOf[T][]): Prisma.Sql {
  return Prisma.sql`status = ANY(${[...statuses]}::${Prisma.raw(ENUM_OF[table])}[])`;
}

/** A status for an INSERT, cast to its column's enum. */
export function statusValue<T extends StatusTable>(table: T, status: StatusOf[T]): Prisma.Sql {
  return Prisma.sql`${status}::${Prisma.raw(ENUM_OF[table])}`;
}

/** The time a guard compares against: the caller's clock in tests, the database's now() otherwise. */
export function nowOr(asOf: Date | null): Prisma.Sql {
  return Prisma.sql`COALESCE(${asOf}::timestamptz, now())`;
}
