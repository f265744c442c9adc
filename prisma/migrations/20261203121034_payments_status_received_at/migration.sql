-- CreateIndex
CREATE INDEX "payments_status_received_at_idx" ON "payments"("status", "received_at");

