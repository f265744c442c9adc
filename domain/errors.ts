/**
 * Failures that no retry can fix: activities throw them as non-retryable ApplicationFailures
 * with the code as `type`, workflows pass them on, and the API maps each to its contract error.
 */
export const BUSINESS_ERRORS = {
  UNKNOWN_SKU: 'a product in the order does not exist',
  OUT_OF_STOCK: 'not enough units are available',
  COUPON_UNAVAILABLE: 'the coupon does not exist or is already used',
  IDEMPOTENCY_KEY_REUSED: 'the Idempotency-Key was used for a different request',
  TOO_MANY_OPEN_ORDERS: 'the customer already holds the most unpaid orders allowed; pay or cancel one first',
  TOO_MANY_UNITS_HELD:
    'the order would bring the units of a product the customer holds unpaid past the limit; pay or cancel first',
  ORDER_TOTAL_TOO_LARGE:
    'the order comes to more than the largest total that can be paid; split it into smaller orders',
  ORDER_TOTAL_TOO_SMALL:
    'the order comes to less than the smallest amount the payment provider charges, yet more than nothing; add to it',
  UNKNOWN_ORDER: 'no order has that id',
  UNKNOWN_PAYMENT: 'no payment with that id belongs to the order',
  ORDER_NOT_UNPAID: 'the order is no longer unpaid',
  ORDER_NOT_CLOSING:
    'the order is not waiting for the payment provider to close its payment; only such an order can be force-cancelled',
  STEP_NOT_FAILED: 'only a FAILED fulfillment step can be retried',
  REFUND_NOT_FAILED: 'only a refund the payment provider rejected (REFUND_FAILED) can be retried',
} as const;
export type BusinessErrorCode = keyof typeof BUSINESS_ERRORS;
export const BUSINESS_ERROR_CODES = Object.keys(BUSINESS_ERRORS) as BusinessErrorCode[];

export function isBusinessErrorCode(type: string | undefined | null): type is BusinessErrorCode {
  return type != null && type in BUSINESS_ERRORS;
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
