import { ActivityFailure, ApplicationFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { BUSINESS_ERROR_CODES, isBusinessErrorCode, THIRD_PARTY_FAILURES } from '../domain/errors.js';

/**
 * Whose an activity's failure is, once its preset's round of attempts has ended:
 * - `refused`: a business refusal, or a third party that rejected the request for good; no retry
 *   can change it, so the caller decides what follows;
 * - `theirs`: the third party stayed unavailable through the round; a call that may give up does;
 * - `ours`: anything else (our database down, a timeout, a bug): tried again until it succeeds.
 */
export type FailureKind = 'refused' | 'theirs' | 'ours';

/**
 * The kind of an activity's failure, or undefined for anything that is not one (a cancellation
 * of the workflow's own scope, a bug in workflow code), which the caller must pass on. A regular
 * activity's failure arrives wrapped in an ActivityFailure, a local activity's may arrive as its
 * cause itself: both read alike here.
 */
export function failureKind(err: unknown): FailureKind | undefined {
  if (isCancellation(err)) return undefined;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return 'ours';
  if (!(cause instanceof ApplicationFailure)) return err instanceof ActivityFailure ? 'ours' : undefined;
  if (isBusinessErrorCode(cause.type) || cause.type === THIRD_PARTY_FAILURES.rejected) return 'refused';
  if (cause.type === THIRD_PARTY_FAILURES.unavailable) return 'theirs';
  return cause.nonRetryable ? 'refused' : 'ours';
}

/**
 * The error types the server must not retry for a call that the given kinds end: what failureKind
 * reads as `refused` or `theirs` by type. A failure thrown non-retryable is `refused` and never
 * retried anyway; timeouts and every other type are `ours`, retried.
 */
export function errorTypesOf(endsIt: readonly FailureKind[]): string[] {
  return [
    ...(endsIt.includes('refused') ? [...BUSINESS_ERROR_CODES, THIRD_PARTY_FAILURES.rejected] : []),
    ...(endsIt.includes('theirs') ? [THIRD_PARTY_FAILURES.unavailable] : []),
  ];
}

/** An activity's business failure reaches the client as itself, so the API can map its type. */
export function businessCause(err: unknown): unknown {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : err;
}

/** The root cause an operator needs to read: the activity's own error, not the wrappers around it. */
export function rootCauseMessage(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  // One line: driver errors span several, with blank ones.
  return (cause instanceof Error ? `${cause.name}: ${cause.message}` : String(err)).replace(/\s+/g, ' ').trim();
}
