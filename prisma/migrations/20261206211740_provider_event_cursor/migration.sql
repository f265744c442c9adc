-- CreateTable
CREATE TABLE "provider_event_cursor" (
    "id" TEXT NOT NULL,
    "created_since" TIMESTAMPTZ(3) NOT NULL,
    "starting_after" TEXT,
    "pass_started_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_event_cursor_pkey" PRIMARY KEY ("id")
);

