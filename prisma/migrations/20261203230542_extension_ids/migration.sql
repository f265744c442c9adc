-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "extension_ids" TEXT[] DEFAULT ARRAY[]::TEXT[];


-- The extension an earlier build recorded, so that its attempt run again is recognised here too.
UPDATE "orders" SET "extension_ids" = ARRAY["last_extension_id"] WHERE "last_extension_id" IS NOT NULL;
