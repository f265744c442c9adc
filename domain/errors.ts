import { ApplicationFailure } from '@temporalio/common';

/**
 * Refusals by the rules, which no retry can fix: each code with the HTTP status and the message the
 * API answers it with. Activities and workflows raise them alike (businessFailure), the API maps a
 * failure of one of these types to its contract error (api/temporal-errors.ts): each is said here
 * only. No I/O: workflow code imports this module.
 */
export const BUSINESS_ERRORS = {
  UNKNOWN_SKU: { status: 404, message: 'a product in the order does not exist' },
  OUT_OF_STOCK: { status: 409, message: 'not enough units are available' },
  COUPON_UNAVAILABLE: { status: 409, message: 'the coupon does not exist or is already used' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'the Idempotency-Key was used for a different request' },
  TOO_MANY_OPEN_ORDERS: {
    status: 409,
    message: 'the customer already holds the most unpaid orders allowed; pay or cancel one first',
  },
  TOO_MANY_UNITS_HELD: {
    status: 409,
    message:
      'the order would bring the units of a product the customer holds unpaid past the limit; pay or cancel first',
  },
  ORDER_TOTAL_TOO_LARGE: {
    status: 422,
    message: 'the order comes to more than the largest total that can be paid; split it into smaller orders',
  },
  ORDER_TOTAL_TOO_SMALL: {
    status: 422,
    message:
      'the order comes to less than the smallest amount the payment provider charges, yet more than nothing; add to it',
  },
  UNKNOWN_ORDER: { status: 404, message: 'no order has that id' },
  UNKNOWN_PAYMENT: { status: 404, message: 'no payment with that id belongs to the order' },
  ORDER_NOT_UNPAID: { status: 409, message: 'the order is no longer unpaid' },
  ORDER_NOT_CLOSING: {
    status: 409,
    message:
      'the order is not waiting for the payment provider to close its payment; only such an order can be force-cancelled',
  },
  STEP_NOT_FAILED: { status: 409, message: 'only a FAILED fulfillment step can be retried' },
  REFUND_NOT_FAILED: {
    status: 409,
    message: 'only a refund the payment provider rejected (REFUND_FAILED) can be retried',
  },
} as const satisfies Record<string, { status: number; message: string }>;
export type BusinessErrorCode = keyof typeof BUSINESS_ERRORS;
export const BUSINESS_ERROR_CODES = Object.keys(BUSINESS_ERRORS) as BusinessErrorCode[];

export function isBusinessErrorCode(type: string | undefined | null): type is BusinessErrorCode {
  return type != null && type in BUSINESS_ERRORS;
}

/**
 * A refusal as Temporal carries it: non-retryable, the code as its `type`, the catalogue's message,
 * and at most one details object, which the API answers as the error's `details`.
 */
export function businessFailure(code: BusinessErrorCode, details?: Record<string, unknown>): ApplicationFailure {
  return ApplicationFailure.create({
    type: code,
    message: BUSINESS_ERRORS[code].message,
    nonRetryable: true,
    details: details === undefined ? [] : [details],
  });
}

/** A failure businessFailure made: a refusal by the rules, not an error. */
export function isBusinessFailure(err: unknown): err is ApplicationFailure & { type: BusinessErrorCode } {
  return err instanceof ApplicationFailure && isBusinessErrorCode(err.type);
}

/**
 * How a third party's adapter reports the provider's own failure: an ApplicationFailure of one of
 * these types, retryable (UNAVAILABLE) or not (REJECTED). Only these may end a bounded step (a
 * notice given up, a fulfillment step dead-lettered, a refund held for an operator); any other
 * failure is ours — our database, our code — and is retried until it succeeds.
 */
export const THIRD_PARTY_FAILURES = {
  unavailable: 'THIRD_PARTY_UNAVAILABLE',
  rejected: 'THIRD_PARTY_REJECTED',
} as const;
