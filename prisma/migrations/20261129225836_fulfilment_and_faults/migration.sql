-- AlterTable
ALTER TABLE "fulfillment_steps" ADD COLUMN     "failed_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "fake_faults" (
    "service" TEXT NOT NULL,
    "fail_next" INTEGER NOT NULL DEFAULT 0,
    "fail_always" BOOLEAN NOT NULL DEFAULT false,
    "latency_ms" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "fake_faults_pkey" PRIMARY KEY ("service")
);

-- CreateIndex
CREATE INDEX "fulfillment_steps_status_idx" ON "fulfillment_steps"("status");

