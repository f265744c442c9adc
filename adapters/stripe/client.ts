import Stripe from 'stripe';
import type { StripeSettings } from '../../lib/config/stripe.js';

/** Below any activity's start-to-close timeout, so a hung request fails as unavailable and is retried. */
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * The official client, on Stripe's API or on STRIPE_API_BASE (stripe-mock, the local fake). Its own
 * retries are off: the activity is the place a call is retried, with the same idempotency keys.
 * (It still resends once over a connection that closed under it; the keys make that harmless too,
 * and a repeated cancel finds the intent cancelled.) With a Connect account, every call acts on it.
 */
export function createStripeClient(
  settings: Pick<StripeSettings, 'secretKey' | 'apiBase'> & Partial<Pick<StripeSettings, 'connectAccount'>>,
): Stripe {
  return new Stripe(settings.secretKey, {
    maxNetworkRetries: 0,
    ...(settings.connectAccount === undefined ? {} : { stripeAccount: settings.connectAccount }),
    timeout: REQUEST_TIMEOUT_MS,
    ...(settings.apiBase === undefined ? {} : endpoint(new URL(settings.apiBase))),
  });
}

function endpoint(base: URL): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return {
    host: base.hostname.replace(/^\[(.*)\]$/, '$1'), // an IPv6 literal without the URL's brackets
    port: base.port || (protocol === 'http' ? 80 : 443),
    protocol,
  };
}
