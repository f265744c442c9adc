import { ApplicationFailure } from '@temporalio/activity';
import { BUSINESS_ERRORS, isBusinessErrorCode, type BusinessErrorCode } from '../domain/errors.js';

/** A failure no retry can fix; its `type` is the contract's error code. */
export function businessFailure(code: BusinessErrorCode, details?: Record<string, unknown>): ApplicationFailure {
  return ApplicationFailure.create({
    type: code,
    message: BUSINESS_ERRORS[code],
    nonRetryable: true,
    details: details === undefined ? [] : [details],
  });
}

/** A failure businessFailure made: a refusal by the rules, not an error. */
export function isBusinessFailure(err: unknown): err is ApplicationFailure {
  return err instanceof ApplicationFailure && isBusinessErrorCode(err.type);
}
