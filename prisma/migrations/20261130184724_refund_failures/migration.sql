-- AlterEnum
ALTER TYPE "PaymentStatus" ADD VALUE 'REFUND_FAILED';

-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "refund_error" TEXT,
ADD COLUMN     "refund_failed_at" TIMESTAMPTZ(3);

