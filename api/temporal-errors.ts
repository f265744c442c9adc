import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/client';
import { isBusinessErrorCode, type BusinessErrorCode } from '../domain/errors.js';

/** The contract error code a failed update or workflow carries somewhere in its cause chain, if any. */
export function businessCodeOf(err: unknown): BusinessErrorCode | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure && isBusinessErrorCode(e.type)) return e.type;
  }
  return undefined;
}

/** Signalling or updating a workflow that has already completed raises WorkflowNotFoundError. */
export function isWorkflowGone(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}
