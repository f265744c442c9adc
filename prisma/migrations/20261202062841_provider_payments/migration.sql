-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "closing_since" TIMESTAMPTZ(3),
ADD COLUMN     "payment_client_secret" TEXT,
ADD COLUMN     "provider_payment_id" TEXT;

