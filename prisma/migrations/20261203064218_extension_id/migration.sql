-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "last_extension_id" TEXT;

