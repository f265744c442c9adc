import { z } from 'zod';
import { ConfigError, LOOPBACK_HOSTS } from './env.js';
import { secret } from './secrets.js';

// Additions (docs/stripe.md): Stripe, with THIRD_PARTIES=stripe. The messages never echo a value.
export const StripeSchema = z.object({
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^[sr]k_(test|live)_\w+$/, 'must be a Stripe secret or restricted key (sk_… or rk_…)')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w+$/, "must be a webhook endpoint's signing secret (whsec_…)")
    .optional(),
  STRIPE_API_BASE: z.url().optional(),
  STRIPE_CONNECT_ACCOUNT: z
    .string()
    .regex(/^acct_\w+$/, 'must be a Connect account id (acct_…)')
    .optional(),
  STRIPE_ALLOW_TEST_KEYS: z.enum(['true', 'false']).default('false'),
  STRIPE_PAYMENT_METHODS: z
    .string()
    .regex(/^[a-z_]+(,[a-z_]+)*$/, "must be Stripe's payment method types, comma-separated (e.g. card,ideal)")
    .optional(),
});

export interface StripeSettings {
  /** The API key (secret or restricted): never logged. */
  secretKey: string;
  /** Verifies the signatures of the events Stripe posts (`Stripe-Signature`): never logged. */
  webhookSecret: string;
  /** Unset: Stripe's API. Otherwise an origin standing in for it: stripe-mock, the local fake. */
  apiBase: string | undefined;
  /** The key's mode: a live key (sk_live_…, rk_live_…) takes real money, a test key does not. */
  livemode: boolean;
  /** STRIPE_CONNECT_ACCOUNT: the connected account every call acts on; undefined: the platform's own. */
  connectAccount: string | undefined;
  /** STRIPE_PAYMENT_METHODS: the payment method types offered; undefined: the Dashboard's (automatic_payment_methods). */
  paymentMethods: string[] | undefined;
}

export function stripeSettings(
  e: z.infer<typeof StripeSchema>,
  { embedded, production }: { embedded: boolean; production: boolean },
): StripeSettings {
  if (e.STRIPE_SECRET_KEY === undefined) throw new ConfigError('STRIPE_SECRET_KEY: required with THIRD_PARTIES=stripe');
  if (e.STRIPE_WEBHOOK_SECRET === undefined)
    throw new ConfigError('STRIPE_WEBHOOK_SECRET: required with THIRD_PARTIES=stripe');
  // It alone authenticates POST /webhooks/stripe, which pays orders: held to every other secret's rule.
  const webhookSecret = secret('STRIPE_WEBHOOK_SECRET', e.STRIPE_WEBHOOK_SECRET, '', embedded);
  if (e.STRIPE_API_BASE !== undefined) checkStripeApiBase(e.STRIPE_API_BASE, e.STRIPE_SECRET_KEY);
  const livemode = /^[sr]k_live_/.test(e.STRIPE_SECRET_KEY);
  // A test key in production takes no real money, and its payments would pay no order (wrong mode).
  if (!livemode && production && e.STRIPE_ALLOW_TEST_KEYS !== 'true')
    throw new ConfigError(
      'STRIPE_SECRET_KEY: a test key under NODE_ENV=production takes no real money; use a live key (sk_live_… or rk_live_…), or set STRIPE_ALLOW_TEST_KEYS=true for a deployment meant to run on test mode',
    );
  return {
    secretKey: e.STRIPE_SECRET_KEY,
    webhookSecret,
    apiBase: e.STRIPE_API_BASE,
    livemode,
    connectAccount: e.STRIPE_CONNECT_ACCOUNT,
    paymentMethods: e.STRIPE_PAYMENT_METHODS?.split(','),
  };
}

/**
 * The client takes a host, port and protocol only, so the base is an origin. The key travels with
 * every request: in clear only to this machine, and a live key only to Stripe itself.
 */
function checkStripeApiBase(base: string, secretKey: string): void {
  const url = new URL(base);
  const fail = (why: string) => {
    throw new ConfigError(`STRIPE_API_BASE: ${why}`);
  };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('must be an http or https URL');
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    fail('must be an origin such as http://127.0.0.1:12111, without a path, query or credentials');
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.includes(url.hostname))
    fail('plain http only to this machine (localhost, 127.0.0.1, [::1]); elsewhere https');
  if (/^[sr]k_live_/.test(secretKey)) fail('a live key goes to Stripe only: unset STRIPE_API_BASE, or use a test key');
}
