import { ApplicationFailure } from '@temporalio/activity';
import { BUSINESS_ERRORS, type BusinessErrorCode } from '../domain/errors.js';

/** A failure no retry can fix; its `type` is the contract's error code. */
export function businessFailure(code: BusinessErrorCode, details?: Record<string, unknown>): ApplicationFailure {
  return ApplicationFailure.create({
    type: code,
    message: BUSINESS_ERRORS[code],
    nonRetryable: true,
    details: details === undefined ? [] : [details],
  });
}
