-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "email" TEXT;

-- CreateTable
CREATE TABLE "customer_emails" (
    "event_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "rejection" TEXT,
    "sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customer_emails_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "customer_emails_order_id_idx" ON "customer_emails"("order_id");

