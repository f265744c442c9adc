-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "payment_in_time_id" TEXT;


-- Unpaid orders that a payment already recorded in time pays: marked as the webhook now marks them
-- (activities/received-payments.ts), so the guarded cancel keeps losing to those payments.
UPDATE "orders" o SET "payment_in_time_id" = (
  SELECT p."payment_id" FROM "payments" p
  WHERE p."order_id" = o."id" AND p."status" = 'RECEIVED'
    AND p."received_at" < o."expires_at" AND p."amount_cents" = o."total_cents"
  ORDER BY p."received_at", p."payment_id"
  LIMIT 1)
WHERE o."status" = 'UNPAID';
