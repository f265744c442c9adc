import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { isBusinessErrorCode, THIRD_PARTY_FAILURES } from '../domain/errors.js';

/** Reading the failures activities come back with: each question answered in one place. */

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

/**
 * The step's time budget (schedule-to-close) ran out while it kept failing: it is stuck, not
 * refused. The server says so by the retry state, whether the budget ended during an attempt (a
 * timeout) or before the next one (the last attempt's own failure).
 */
export function isStuck(err: unknown): boolean {
  return err instanceof ActivityFailure && err.retryState === 'TIMEOUT';
}

/** The activity ran and failed for good (rejected, or out of retries); not a cancellation of ours. */
export function isActivityFailure(err: unknown): err is ActivityFailure {
  return err instanceof ActivityFailure;
}

const THEIRS = new Set<string>(Object.values(THIRD_PARTY_FAILURES));

/**
 * A failure that is not ours to retry away: a business refusal, or the third party's own failure as
 * its adapter reports it. Anything else an activity fails with (our database down past the step's
 * retries, a bug) is ours.
 */
export function isTheirs(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  return cause instanceof ApplicationFailure && (isBusinessErrorCode(cause.type) || THEIRS.has(cause.type ?? ''));
}
