-- The local fakes' tables, in a schema of their own that the production migrations never create.
-- Applied by the dev stacks (npm start, chaos, bench), the tests' template database and the
-- compose demo (`npm run db:fakes`); idempotent, so it runs on every start.
CREATE SCHEMA IF NOT EXISTS fakes;

-- What a fake did: one row per idempotency key (the primary key), as a real provider acts once per key.
CREATE TABLE IF NOT EXISTS fakes.effects (
  service         text NOT NULL,
  operation       text NOT NULL,
  idempotency_key text NOT NULL,
  payload         jsonb NOT NULL,
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (service, operation, idempotency_key)
);

-- Every call, whether it acted, repeated an earlier key or failed (injected).
CREATE TABLE IF NOT EXISTS fakes.calls (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service         text NOT NULL,
  operation       text NOT NULL,
  idempotency_key text NOT NULL,
  outcome         text NOT NULL CHECK (outcome IN ('EFFECT', 'REPEAT', 'FAILED')),
  created_at      timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS calls_service_operation_idempotency_key_idx ON fakes.calls (service, operation, idempotency_key);

-- Injected failures, set through /admin/faults/:service by the API and obeyed by every worker's fakes.
CREATE TABLE IF NOT EXISTS fakes.faults (
  service     text PRIMARY KEY,
  fail_next   integer NOT NULL DEFAULT 0,   -- the next N calls fail, retryably
  fail_always boolean NOT NULL DEFAULT false, -- every call fails, non-retryably, until cleared
  latency_ms  integer NOT NULL DEFAULT 0
);

-- The cancellable fake provider's payments, one per order (dev/fakes/payment-provider.ts).
CREATE TABLE IF NOT EXISTS fakes.payment_intents (
  payment_id      text PRIMARY KEY,
  order_id        uuid NOT NULL UNIQUE,
  amount_cents    bigint NOT NULL,
  currency        text NOT NULL,
  client_secret   text NOT NULL,
  -- Its state at the provider (the service's own statuses are another matter: domain/statuses.ts).
  state           text NOT NULL,
  amount_received bigint,
  paid_at         timestamptz(3),
  cancelled_at    timestamptz(3),
  created_at      timestamptz(3) NOT NULL DEFAULT now()
);

-- The fake provider's events, kept for its listing (listEvents) as a provider keeps them for a
-- sweep to read: a payment that succeeded, a refund that failed after it was made.
CREATE TABLE IF NOT EXISTS fakes.provider_events (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id   text NOT NULL UNIQUE,
  type       text NOT NULL CHECK (type IN ('payment_intent.succeeded', 'refund.failed')),
  payment_id text NOT NULL,
  refund_ref text,
  reason     text,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS provider_events_created_at_idx ON fakes.provider_events (created_at, seq);

-- The states a payment moves through at the provider (ProviderPaymentStatus), replaced on every
-- start so that a database made by an older checkout takes the current list.
ALTER TABLE fakes.payment_intents DROP CONSTRAINT IF EXISTS payment_intents_state_check;
ALTER TABLE fakes.payment_intents ADD CONSTRAINT payment_intents_state_check
  CHECK (state IN ('OPEN', 'CUSTOMER_ACTION', 'FUNDS_IN_TRANSIT', 'SUCCEEDED', 'CANCELLED'));

