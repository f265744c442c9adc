import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import { BUSINESS_ERROR_CODES } from '../domain/errors.js';

/**
 * Retry presets, one per kind of work. They replace the hand-written compensation table: a call
 * that fails is retried with exponential backoff, and every activity is idempotent, so a retry
 * after an unseen success has no second effect. Business failures are never retried.
 *
 * A preset bounds a call's first round of attempts. What happens when it ends without success is
 * the workflow's rule (workflows/keep-trying.ts): a failure of ours goes on as a regular activity
 * the server retries on a capped backoff (workflows/backoff.ts), so an outage delays an order but
 * never fails it; only a refusal, or for a call that may give up the third party's own failure,
 * reaches the caller (docs/failure-modes.md, "Which calls may give up"). The first rounds of the
 * database and money presets ride out a blip inside the workflow task (no event), and leave longer
 * waits to the server's retries, which bound what an outage of hours costs.
 */

/** How long a call may keep failing through our own fault before its order is flagged NeedsAttention. */
export const STUCK_AFTER = '5 minutes';

/**
 * Backoffs up to this long run inside the workflow task (a blip of the database or a provider);
 * longer ones wait on a durable timer, so an outage survives a worker restart and the
 * time-skipping tests can skip it.
 */
const LOCAL_RETRY_THRESHOLD = '1 second';

const retryable = { backoffCoefficient: 2, nonRetryableErrorTypes: BUSINESS_ERROR_CODES };

/** A caller is waiting (POST /orders, an operator's extension): fail fast, but ride out a brief blip. */
export const callerWaitingOptions: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  localRetryThreshold: LOCAL_RETRY_THRESHOLD,
  retry: { ...retryable, initialInterval: '100ms', maximumInterval: '1s', maximumAttempts: 5 },
};

/** Guarded updates in our own database: a round of 3 attempts, 100 ms and 200 ms apart, in the workflow task. */
export const databaseOptions: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  localRetryThreshold: LOCAL_RETRY_THRESHOLD,
  retry: { ...retryable, initialInterval: '100ms', maximumInterval: '1s', maximumAttempts: 3 },
};

/** Money at the provider: a refund we owe, the order's payment created or closed. A round of 3 attempts, 200 ms and 400 ms apart. */
export const moneyOptions: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  localRetryThreshold: LOCAL_RETRY_THRESHOLD,
  retry: { ...retryable, initialInterval: '200ms', maximumInterval: '1s', maximumAttempts: 3 },
};

/** Messages to the customer (cancelled, refunded): worth about 15 minutes of trying, not worth holding the order for. */
export const noticeOptions: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  localRetryThreshold: LOCAL_RETRY_THRESHOLD,
  retry: { ...retryable, initialInterval: '1s', maximumInterval: '1m', maximumAttempts: 20 },
};

/**
 * Fulfillment after payment (invoice, notification, loyalty): local activities, so the three
 * steps run in the workflow task that recorded the payment and cost no action of their own. Each
 * retries on its own long enough to ride out a downstream that is down for a while (about 10
 * minutes over 15 attempts; past the first second each wait is a durable timer), then is
 * dead-lettered (FAILED, NeedsAttention) for an operator.
 */
export const fulfillmentOptions: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  localRetryThreshold: LOCAL_RETRY_THRESHOLD,
  retry: { ...retryable, initialInterval: '1s', maximumInterval: '1m', maximumAttempts: 15 },
};

/** The reconciliation sweep: one that cannot run now is simply the next schedule tick's job. */
export const sweepOptions: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { ...retryable, initialInterval: '200ms', maximumInterval: '1m', maximumAttempts: 3 },
};

/**
 * The provider sweep: a page of the provider's events (up to 20 s on Stripe) and a hand-over per
 * event; one that cannot run now is the next tick's job, and goes on from the same cursor.
 */
export const providerSweepOptions: ActivityOptions = {
  startToCloseTimeout: '1m',
  retry: { ...retryable, initialInterval: '1s', maximumInterval: '1m', maximumAttempts: 3 },
};
