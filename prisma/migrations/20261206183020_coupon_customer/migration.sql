-- AlterTable
ALTER TABLE "coupons" ADD COLUMN     "customer_id" TEXT;

