-- CreateEnum
CREATE TYPE "UnclaimedStatus" AS ENUM ('HELD', 'REFUNDED', 'REFUND_FAILED');

-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "RefundReason" ADD VALUE 'WRONG_CURRENCY';
ALTER TYPE "RefundReason" ADD VALUE 'WRONG_MODE';
ALTER TYPE "RefundReason" ADD VALUE 'FOREIGN_ACCOUNT';
ALTER TYPE "RefundReason" ADD VALUE 'NOT_THE_ORDERS_PAYMENT';

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "currency" TEXT;

-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "connect_account" TEXT,
ADD COLUMN     "currency" TEXT,
ADD COLUMN     "livemode" BOOLEAN,
ADD COLUMN     "refusal" "RefundReason";

-- CreateTable
CREATE TABLE "unclaimed_payments" (
    "payment_id" TEXT NOT NULL,
    "named_order" TEXT,
    "amount_cents" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "connect_account" TEXT,
    "status" "UnclaimedStatus" NOT NULL DEFAULT 'HELD',
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "refund_due_at" TIMESTAMPTZ(3) NOT NULL,
    "refund_ref" TEXT,
    "refunded_at" TIMESTAMPTZ(3),
    "refund_error" TEXT,

    CONSTRAINT "unclaimed_payments_pkey" PRIMARY KEY ("payment_id")
);

-- CreateIndex
CREATE INDEX "unclaimed_payments_status_refund_due_at_idx" ON "unclaimed_payments"("status", "refund_due_at");

