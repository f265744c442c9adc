import { WorkflowNotFoundError, type ApplicationFailure } from '@temporalio/client';
import { isBusinessFailure, type BusinessErrorCode } from '../domain/errors.js';
import { businessError } from './errors.js';

/** Signalling or updating a workflow that has already completed raises WorkflowNotFoundError. */
export function isWorkflowGone(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}

/**
 * Makes a call to Temporal and turns its failure into the contract's error: a business failure
 * (an ApplicationFailure whose type is a contract code, anywhere in the cause chain) as that code,
 * with the details the failure carries or else `details`; a workflow that has ended as `whenGone`,
 * where the endpoint has a code for that; anything else as it is, which the API answers INTERNAL.
 */
export async function callTemporal<T>(
  call: () => Promise<T>,
  { whenGone, details }: { whenGone?: BusinessErrorCode; details?: Record<string, unknown> } = {},
): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (whenGone && isWorkflowGone(err)) throw businessError(whenGone, details);
    const failure = businessFailureOf(err);
    if (failure) throw businessError(failure.type, failureDetails(failure) ?? details);
    throw err;
  }
}

function businessFailureOf(err: unknown): (ApplicationFailure & { type: BusinessErrorCode }) | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (isBusinessFailure(e)) return e;
  return undefined;
}

/** A business failure carries at most one details object (domain/errors.ts). */
function failureDetails(failure: ApplicationFailure): unknown {
  return failure.details?.[0];
}
