-- DropIndex
DROP INDEX "orders_idempotency_key_key";

-- CreateIndex
CREATE UNIQUE INDEX "orders_customer_id_idempotency_key_key" ON "orders"("customer_id", "idempotency_key");

