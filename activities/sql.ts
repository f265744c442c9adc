import { Prisma } from '@prisma/client';

/** `status = ANY(<the transition's from-states>)`: the guard of every status change, taken from the table. */
export function orderStatusIn(from: readonly string[]): Prisma.Sql {
  return Prisma.sql`status = ANY(${[...from]}::"OrderStatus"[])`;
}

export function paymentStatusIn(from: readonly string[]): Prisma.Sql {
  return Prisma.sql`status = ANY(${[...from]}::"PaymentStatus"[])`;
}

/** The time a guard compares against: the caller's clock in tests, the database's now() otherwise. */
export function nowOr(asOf: Date | null): Prisma.Sql {
  return Prisma.sql`COALESCE(${asOf}::timestamptz, now())`;
}

export function stepStatusIn(from: readonly string[]): Prisma.Sql {
  return Prisma.sql`status = ANY(${[...from]}::"StepStatus"[])`;
}
