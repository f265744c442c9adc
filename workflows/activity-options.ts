import type { ActivityOptions } from '@temporalio/workflow';
import { BUSINESS_ERROR_CODES } from './business-errors.js';

/**
 * Retry presets, one per kind of work. They replace the hand-written compensation table: a step
 * that fails is retried with exponential backoff until it succeeds or its attempts run out, and
 * every activity is idempotent, so a retry after an unseen success has no second effect.
 * Business failures are never retried.
 */

/** The caller (POST /orders) is waiting: fail fast, but ride out a brief database blip. */
export const placementOptions: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: {
    initialInterval: '100ms',
    backoffCoefficient: 2,
    maximumInterval: '1s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/** Guarded updates and compensation in our own database: keep trying through an outage of minutes. */
export const databaseOptions: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: {
    initialInterval: '200ms',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 30,
    nonRetryableErrorTypes: BUSINESS_ERROR_CODES,
  },
};

/** Calls to third parties (payment provider, messaging): slower backoff, they may be down for a while. */
export const thirdPartyOptions: ActivityOptions = {
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
 * Fulfilment after payment (invoice, notification, loyalty): each step retries on its own, long
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
