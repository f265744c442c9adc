import { ApplicationFailure } from '@temporalio/common';
import Stripe from 'stripe';
import { THIRD_PARTY_FAILURES } from '../../domain/errors.js';

/**
 * Stripe could not act on the request for now: the connection failed or timed out, Stripe failed
 * (5xx), throttled us (429), or is still working on a request with the same idempotency key (409).
 */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeRateLimitError)
    return true;
  if (!(err instanceof Stripe.errors.StripeError)) return false;
  const status = err.statusCode;
  return status === undefined || status >= 500 || status === 409;
}

/**
 * Stripe failed on its side (5xx). Once its endpoint has begun, Stripe keeps that answer under the
 * request's idempotency key and gives it to every repeat of the key for about 24 hours, even after
 * it recovered: a call that meets one must go on under a key of its own
 * (https://docs.stripe.com/error-low-level#server-errors).
 */
export function isServerError(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && (err.statusCode ?? 0) >= 500;
}

/** The error Stripe answers when the intent's status does not allow the operation (carrying the status). */
export function isUnexpectedState(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && err.code === 'payment_intent_unexpected_state';
}

/** Stripe refuses a refund of a payment already refunded in full: `charge_already_refunded`. */
export function isAlreadyRefunded(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && err.code === 'charge_already_refunded';
}

/** Stripe has no such object: 404 `resource_missing`. */
export function isMissing(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && err.code === 'resource_missing';
}

/**
 * Stripe's error in the adapters' failure contract: unavailable, retryable; refused (card and
 * invalid-request errors), not retryable. A key Stripe does not accept (401, 403) is our
 * configuration's fault, not the provider's refusal: an error of ours, retried until the key is
 * fixed rather than ending bounded steps, whose message leaves out Stripe's, which may quote the
 * key (stripe-mock's does, whole). Anything that is not Stripe's error is ours too.
 */
export function providerFailure(err: unknown, operation: string): unknown {
  if (!(err instanceof Stripe.errors.StripeError)) return err;
  if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError)
    return new Error(
      `Stripe refused our API key to ${operation} (${err.type}, ${err.statusCode ?? 'no status'}, request ${err.requestId ?? 'unknown'}): check STRIPE_SECRET_KEY and its permissions`,
    );
  const unavailable = isUnavailable(err);
  return ApplicationFailure.create({
    type: unavailable ? THIRD_PARTY_FAILURES.unavailable : THIRD_PARTY_FAILURES.rejected,
    message: `Stripe ${unavailable ? 'is unavailable' : 'refused'} to ${operation}: ${err.message}`,
    nonRetryable: !unavailable,
    details: [{ statusCode: err.statusCode ?? null, code: err.code ?? null, requestId: err.requestId ?? null }],
  });
}

/** Stripe answered, and its answer is a refusal (e.g. a refund that failed at once). */
export function rejection(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, THIRD_PARTY_FAILURES.rejected);
}

/** Runs one call to Stripe, its failure reported in the contract's terms. */
export async function callStripe<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw providerFailure(err, operation);
  }
}
