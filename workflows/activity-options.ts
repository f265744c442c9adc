import type { ActivityOptions } from '@temporalio/workflow';
import { BUSINESS_ERROR_CODES } from '../domain/errors.js';

/**
 * Retry presets, one per kind of work. They replace the hand-written compensation table: a step
 * that fails is retried with exponential backoff, and every activity is idempotent, so a retry
 * after an unseen success has no second effect. Business failures are never retried.
 *
 * Which steps may give up, and why (docs/failure-modes.md, "Which steps may give up"):
 * - never: our own database steps and the money we owe (refunds, closing a payment intent). An
 *   outage of any length only delays them; each call is bounded by STEP_STUCK_AFTER instead, so a
 *   step that long without success comes back to the workflow, which flags the order and calls it
 *   again (workflows/must-succeed.ts);
 * - after bounded retries, where giving up is the business answer: a caller is waiting (placement,
 *   an admin's extension: nothing was written, the caller is told); a courtesy message (the
 *   customer is not told, the order is flagged); fulfillment (the dead letter, retried by an operator).
 */

/** How long a step that must succeed may keep failing before the order is flagged NeedsAttention. */
export const STEP_STUCK_AFTER = '5 minutes';

/** A caller is waiting (POST /orders, an admin's extend): fail fast, but ride out a brief database blip. */
export const interactiveOptions: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: {
    initialInterval: '100ms',
    backoffCoefficient: 2,
    maximumInterval: '1s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/** Guarded updates and compensation in our own database: retried until the database is back. */
export const databaseOptions: ActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: STEP_STUCK_AFTER,
  retry: {
    initialInterval: '200ms',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    // no maximumAttempts: unlimited
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/**
 * Money we owe the customer (a refund) or must stop taking (a cancelled order's payment intent):
 * retried until the provider answers. A rejection for good (a non-retryable failure) is recorded
 * and waits for an operator.
 */
export const moneyOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: STEP_STUCK_AFTER,
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    // no maximumAttempts: unlimited
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/** Messages to the customer (cancelled, refunded): worth a long try, not worth holding the order for. */
export const notificationOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    maximumAttempts: 20,
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/**
 * Fulfillment after payment (invoice, notification, loyalty): each step retries on its own, long
 * enough to ride out a downstream that is down for a while (about 10 minutes over 15 attempts),
 * then lands in the dead-letter state (FAILED, NeedsAttention) for an operator.
 */
export const fulfillmentOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    maximumAttempts: 15,
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/** The reconciliation sweep: one that cannot run now is simply the next schedule tick's job. */
export const sweepOptions: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { ...databaseOptions.retry, maximumAttempts: 3 },
};
