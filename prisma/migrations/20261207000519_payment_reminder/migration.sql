-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "reminded_at" TIMESTAMPTZ(3);

