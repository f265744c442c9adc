/**
 * The currencies the service takes payments in (CURRENCY), each with the smallest amount the payment
 * provider charges in it, in its minor unit: Stripe's minimum charge amounts
 * (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts). Placement refuses a total
 * above 0 and below it (ORDER_TOTAL_TOO_SMALL), so that every order placed can be paid; a total of
 * 0 is paid at placement. Only currencies with two decimals are listed: amounts are cents.
 */
export const MINIMUM_CHARGE_CENTS = {
  aud: 50,
  cad: 50,
  chf: 50,
  czk: 1500,
  dkk: 250,
  eur: 50,
  gbp: 30,
  hkd: 400,
  nok: 300,
  nzd: 50,
  pln: 200,
  sek: 300,
  sgd: 50,
  usd: 50,
} as const satisfies Record<string, number>;

export type Currency = keyof typeof MINIMUM_CHARGE_CENTS;
export const CURRENCIES = Object.keys(MINIMUM_CHARGE_CENTS) as [Currency, ...Currency[]];
