-- The local fakes' tables leave the production schema: they live in their own schema `fakes`
-- (dev/fakes/schema.sql), which only the dev stacks, the tests and the compose demo create.

-- DropTable
DROP TABLE "fake_effects";

-- DropTable
DROP TABLE "fake_calls";

-- DropTable
DROP TABLE "fake_faults";

