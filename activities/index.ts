import type { ActivityDeps } from './deps.js';
import { createFulfillmentActivities } from './fulfillment.js';
import { createNotificationActivities } from './notifications.js';
import { createOrderActivities } from './orders.js';
import { createPaymentActivities } from './payments.js';
import { createPaymentReminderActivities } from './payment-reminder.js';
import { createProviderPaymentActivities } from './provider-payments.js';
import { createProviderSweepActivities } from './provider-sweep.js';
import { createReconciliationActivities } from './reconciliation.js';

export type { ActivityDeps } from './deps.js';

/** Every activity the worker registers, built from its dependencies. Workflows import only the type. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createOrderActivities(deps),
    ...createPaymentActivities(deps),
    ...createPaymentReminderActivities(deps),
    ...createProviderPaymentActivities(deps),
    ...createNotificationActivities(deps),
    ...createFulfillmentActivities(deps),
    ...createReconciliationActivities(deps),
    ...createProviderSweepActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
