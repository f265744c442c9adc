/**
 * The largest total an order may have, in cents: the largest amount Stripe accepts for one charge in
 * most currencies (99,999,999 minor units, e.g. USD 999,999.99). Placement refuses a larger total
 * (ORDER_TOTAL_TOO_LARGE), and the payment webhooks accept amounts up to it, so every order the
 * service places can be paid. Every amount the service stores fits a 32-bit integer under it; only
 * the subtotal placement adds up before it compares can be larger (at most 50 lines × 1,000 units ×
 * 100,000,000 cents, well within a JavaScript number's exact integers).
 */
export const MAX_ORDER_TOTAL_CENTS = 99_999_999;
