-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "event_seq" INTEGER NOT NULL DEFAULT 0;

