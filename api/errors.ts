import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { z } from 'zod';
import { BUSINESS_ERRORS, type BusinessErrorCode } from '../domain/errors.js';
import { isPoolExhausted } from '../lib/db.js';
import type { Logger } from '../lib/logger.js';
import { SIGNATURE_TOLERANCE_SECONDS } from '../adapters/stripe/events.js';
import { bearerTokenOf } from '../lib/bearer-tokens.js';
import { MAX_CLOCK_SKEW_SECONDS } from './webhook-signature.js';

/**
 * The API's own error codes, beside the business ones (domain/errors.ts): its status and what it
 * means. A route may say more in its message; the OpenAPI document and docs/api.md use these.
 */
const API_ERRORS = {
  VALIDATION_FAILED: { status: 400, message: 'the request is not valid' },
  UNAUTHORIZED: {
    status: 401,
    message: 'a valid bearer token is needed: the admin token, or a customer token where customers may call',
  },
  INVALID_SIGNATURE: {
    status: 401,
    message: `missing or wrong signature, or a timestamp more than ${MAX_CLOCK_SKEW_SECONDS / 60} minutes off`,
  },
  INVALID_STRIPE_SIGNATURE: {
    status: 400,
    message: `missing or wrong Stripe-Signature, or one more than ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes old`,
  },
  CUSTOMER_MISMATCH: { status: 403, message: "a customer's token acts only for that customer" },
  NOT_FOUND: { status: 404, message: 'no such route' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'the path does not take this method; Allow lists those it takes' },
  UNKNOWN_COUPON: { status: 404, message: 'no coupon has that code' },
  COUPON_IN_USE: {
    status: 409,
    message: 'an order holds or used the coupon: whose it is cannot change any more',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: 'the request did not arrive in time: its headers within 10 s, all of it within 30 s',
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'the request body is too large' },
  HEADERS_TOO_LARGE: { status: 431, message: 'the request headers are too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "the request body's charset or content encoding is not supported" },
  RATE_LIMITED: { status: 429, message: 'too many calls; retry after Retry-After seconds' },
  TOO_MANY_FAILED_ATTEMPTS: {
    status: 429,
    message: 'too many refused credentials from this address; retry after Retry-After seconds',
  },
  TOO_MANY_COUPON_ATTEMPTS: {
    status: 429,
    message:
      'too many refused coupon codes from this customer; orders without a coupon are still taken; retry after Retry-After seconds',
  },
  UNKNOWN_WEBHOOK_ENDPOINT: { status: 404, message: 'no webhook endpoint has that id' },
  UNKNOWN_WEBHOOK_DELIVERY: { status: 404, message: 'no webhook delivery has that id' },
  WEBHOOK_DELIVERY_PENDING: {
    status: 409,
    message: 'the delivery is still being tried (PENDING); only a DEAD or DELIVERED one is redelivered',
  },
  INTERNAL: { status: 500, message: 'something went wrong on our side' },
  BUSY: {
    status: 503,
    message: 'too busy to answer now: no database connection came in time; retry after Retry-After seconds',
  },
  CALLBACK_REFUSED: { status: 502, message: 'the payment webhook refused the simulated callback' },
  PAYLOAD_NOT_DECODABLE: {
    status: 422,
    message: 'a payload is encrypted with a key this service does not hold, or was altered',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof API_ERRORS | BusinessErrorCode;

/** Every code the API answers with, its HTTP status and its standard message: the one list. */
export const ERRORS: Readonly<Record<ErrorCode, { status: number; message: string }>> = {
  ...API_ERRORS,
  ...BUSINESS_ERRORS,
};

/** Every error the API answers with: JSON `{error: {code, message, details}}`, never HTML or a stack. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string = ERRORS[code].message,
    readonly details?: unknown,
    /** Headers the answer carries, e.g. a 429's Retry-After. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.status = ERRORS[code].status;
  }
}

/** The contract's JSON error body for `code`: what every error answer carries. */
export function errorBody(code: ErrorCode, message: string = ERRORS[code].message, details?: unknown): string {
  return JSON.stringify({ error: { code, message, ...(details === undefined ? {} : { details }) } });
}

export function businessError(code: BusinessErrorCode, details?: unknown): ApiError {
  return new ApiError(code, undefined, details);
}

/** Parses input with a schema; a mismatch is a 400 VALIDATION_FAILED listing each problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new ApiError('VALIDATION_FAILED', undefined, {
      issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return result.data;
}

export const notFound: RequestHandler = (req) => {
  throw new ApiError('NOT_FOUND', `no route for ${req.method} ${req.path}`);
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) return;
    const apiError = toApiError(err);
    if (apiError.code === 'BUSY') {
      // Load shed, not a fault: one warning line each, and the client told when to come back.
      logger.warn({ method: req.method, path: req.path }, 'request shed: no database connection in time');
      res.set('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    } else if (apiError.status >= 500) logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (apiError.code === 'UNAUTHORIZED') res.set('WWW-Authenticate', bearerChallenge(req));
    if (apiError.headers) res.set(apiError.headers);
    res
      .status(apiError.status)
      .type('json')
      .send(errorBody(apiError.code, apiError.message, apiError.details));
  };
}

/**
 * RFC 6750's challenge: a 401 names the scheme that would succeed, and says `invalid_token` when a
 * bearer token was sent and refused (none sent: no error code, as the RFC asks).
 */
function bearerChallenge(req: Request): string {
  const tokenSent = bearerTokenOf(req.get('authorization')) !== undefined;
  return `Bearer realm="order-lifecycle"${tokenSent ? ', error="invalid_token"' : ''}`;
}

/** What a shed request is told to wait: about the time a queued connection takes to free up. */
const BUSY_RETRY_AFTER_SECONDS = 1;

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isPoolExhausted(err)) return new ApiError('BUSY');
  const status = (err as { status?: unknown }).status;
  // The router raises a URIError of status 400 for a path parameter it cannot percent-decode
  // (`/orders/%ZZ`), before any route runs: the path is at fault, there may be no body at all.
  if (err instanceof URIError && status === 400) {
    return new ApiError(
      'VALIDATION_FAILED',
      'the request path is not valid: a path parameter is not correctly percent-encoded',
    );
  }
  // body-parser's errors carry a status: too large 413, bad charset or encoding 415, anything else
  // about the body (malformed JSON, an aborted upload) 400.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new ApiError('PAYLOAD_TOO_LARGE', (err as Error).message);
    if (status === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE', (err as Error).message);
    return new ApiError('VALIDATION_FAILED', 'the request body is not valid JSON');
  }
  return new ApiError('INTERNAL');
}
