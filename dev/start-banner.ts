import type { Config } from '../lib/config/index.js';

/**
 * The start banner's line on the third parties: the payment provider actually in use, and whether
 * anything real is paid or sent. Names the key's mode, never the key.
 */
export function providersInUse(config: Config): string {
  if (config.stripe === undefined)
    return `the local fakes (THIRD_PARTIES=fake, FAKE_PAYMENTS=${config.fakePayments}): nothing real is paid or sent`;
  const mode = /^[sr]k_live_/.test(config.stripe.secretKey)
    ? 'a live key: real money is taken'
    : 'a test key: no real money moves';
  const api = config.stripe.apiBase === undefined ? "Stripe's API" : `${config.stripe.apiBase} standing in for Stripe`;
  return (
    `payments on Stripe (THIRD_PARTIES=stripe, ${mode}, ${api}, in ${config.currency}); ` +
    'invoicing, messaging and loyalty on the local fakes, which send nothing'
  );
}
