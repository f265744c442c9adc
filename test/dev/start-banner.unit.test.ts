import { expect, it } from 'vitest';
import { providersInUse } from '../../dev/start-banner.js';
import { loadConfig } from '../../lib/config/index.js';

/** npm start's environment: nothing but what docs/stripe.md asks for (or nothing at all). */
const STRIPE = {
  THIRD_PARTIES: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_51BannerKeyNeverShown',
  STRIPE_WEBHOOK_SECRET: 'whsec_banner',
};

it('names Stripe when payments go to Stripe, with the mode of its key and never the key', () => {
  const line = providersInUse(loadConfig(STRIPE));
  expect(line).toMatch(
    /^payments on Stripe \(THIRD_PARTIES=stripe, a test key: no real money moves, Stripe's API, in eur\)/,
  );
  expect(line).not.toMatch(/local fakes \(|nothing real is paid/);
  expect(line).not.toContain('sk_test_');
  expect(providersInUse(loadConfig({ ...STRIPE, STRIPE_SECRET_KEY: 'rk_live_51Restricted' }))).toContain(
    'a live key: real money is taken',
  );
  expect(providersInUse(loadConfig({ ...STRIPE, STRIPE_API_BASE: 'http://127.0.0.1:12111' }))).toContain(
    'http://127.0.0.1:12111 standing in for Stripe',
  );
});

it('says nothing real is paid on the local fakes', () => {
  expect(providersInUse(loadConfig({}))).toBe(
    'the local fakes (THIRD_PARTIES=fake, FAKE_PAYMENTS=cancellable): nothing real is paid or sent',
  );
});
