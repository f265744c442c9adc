import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config/index.js';
import { parseDuration } from '../lib/duration.js';
import { signCustomerToken } from './customer-token.js';
import { runMain, StartupError } from './startup-error.js';

/**
 * `npm run token -- <customerId> [--expires-in 1h]`: prints a customer's bearer token, signed with
 * CUSTOMER_JWT_SECRET (the development default unless set), for trying the API with curl:
 *   curl -H "Authorization: Bearer $(npm run -s token -- alice)" localhost:3000/orders
 */
runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { 'expires-in': { type: 'string', default: '1h' } },
  });
  const customerId = positionals[0];
  if (!customerId) throw new StartupError('usage: npm run token -- <customerId> [--expires-in 1h]');
  const { customerTokens } = loadConfig();
  if (customerTokens.algorithm !== 'HS256')
    throw new StartupError('CUSTOMER_JWKS_URL is set: customer tokens come from that identity provider');
  let expiresInMs: number;
  try {
    expiresInMs = parseDuration(values['expires-in']);
  } catch (err) {
    throw new StartupError(`--expires-in: ${(err as Error).message}`);
  }
  console.log(await signCustomerToken(customerTokens.secret, customerId, { expiresInMs }));
});
