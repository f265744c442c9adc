import type { ErrorRequestHandler, RequestHandler } from 'express';
import { z } from 'zod';
import { BUSINESS_ERRORS, type BusinessErrorCode } from '../domain/errors.js';
import type { Logger } from '../lib/logger.js';

/** Every error the API answers with: JSON `{error: {code, message, details}}`, never HTML or a stack. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

const BUSINESS_STATUS: Record<BusinessErrorCode, number> = {
  UNKNOWN_SKU: 404,
  OUT_OF_STOCK: 409,
  COUPON_UNAVAILABLE: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  TOO_MANY_OPEN_ORDERS: 409,
  UNKNOWN_ORDER: 404,
  UNKNOWN_PAYMENT: 404,
  ORDER_NOT_UNPAID: 409,
  STEP_NOT_FAILED: 409,
  REFUND_NOT_FAILED: 409,
};

export function businessError(code: BusinessErrorCode, details?: unknown): ApiError {
  return new ApiError(BUSINESS_STATUS[code], code, BUSINESS_ERRORS[code], details);
}

/** Parses input with a schema; a mismatch is a 400 VALIDATION_FAILED listing each problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new ApiError(400, 'VALIDATION_FAILED', 'the request is not valid', {
      issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return result.data;
}

export const notFound: RequestHandler = (req) => {
  throw new ApiError(404, 'NOT_FOUND', `no route for ${req.method} ${req.path}`);
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) return;
    const apiError = toApiError(err);
    if (apiError.status >= 500) logger.error({ err, method: req.method, path: req.path }, 'request failed');
    res.status(apiError.status).json({
      error: { code: apiError.code, message: apiError.message, ...(apiError.details === undefined ? {} : { details: apiError.details }) },
    });
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // body-parser's errors carry a status (malformed JSON 400, too large 413, bad charset 415).
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'VALIDATION_FAILED';
    return new ApiError(status, code, status === 400 ? 'the request body is not valid JSON' : (err as Error).message);
  }
  return new ApiError(500, 'INTERNAL', 'something went wrong on our side');
}
