import type { FulfillmentStep } from '../domain/statuses.js';

/**
 * A fulfillment step as the database spells it (the FulfillmentStep enum of prisma/schema.prisma):
 * its name in capitals. Kept so at the boundaries that outlive a build — the rows, the third
 * parties' idempotency keys (`<orderId>:INVOICE`) and the metrics' `step` label, which the API's
 * gauge reads from the rows — and converted there only: everywhere else a step has its one name.
 */
export type StoredStep = Uppercase<FulfillmentStep>;

export function storedStep(step: FulfillmentStep): StoredStep {
  return step.toUpperCase() as StoredStep;
}

export function stepOf(stored: StoredStep): FulfillmentStep {
  return stored.toLowerCase() as FulfillmentStep;
}
