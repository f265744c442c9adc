-- CreateIndex
CREATE INDEX "coupons_order_id_idx" ON "coupons"("order_id");

