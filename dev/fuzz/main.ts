import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { signCustomerToken } from '../customer-token.js';
import { startLocalStack } from '../local-stack.js';
import { findFreePort } from '../ports.js';
import { runMain, StartupError } from '../startup-error.js';
import { freeServerPorts } from '../temporal/server.js';
import { resolveSchemathesis, runSchemathesis } from './schemathesis.js';
import { startSigningProxy } from './signing-proxy.js';

// `npm run fuzz [-- --examples N]`: Schemathesis against the live /openapi.json of the embedded
// stack, once as a customer and once as the operator, with every check: no answer may be a 5xx,
// and every answer must match the document (status, headers, body). The payment webhook's bodies
// are signed on the way (signing-proxy.ts), so they are fuzzed past the signature too. Loopback
// only; each run is bounded by its number of examples per operation.

const SECRETS = {
  ADMIN_TOKEN: 'fuzz-admin-token-0123456789abcdefghij',
  PAYMENT_WEBHOOK_SECRET: 'fuzz-webhook-secret-0123456789abcdef',
  CUSTOMER_JWT_SECRET: 'fuzz-customer-jwt-secret-0123456789ab',
  ORDER_ID_SECRET: 'fuzz-order-id-secret-0123456789abcdef',
} as const;

const OPERATOR_CONFIG = fileURLToPath(new URL('./operator.toml', import.meta.url));

runMain(async () => {
  const { values } = parseArgs({ options: { examples: { type: 'string', default: '50' } } });
  const examples = Number(values.examples);
  if (!Number.isInteger(examples) || examples < 1) throw new StartupError('--examples takes a whole number above 0');

  const schemathesis = await resolveSchemathesis();
  const stack = await startLocalStack({
    postgres: { kind: 'embedded', port: await findFreePort(), database: 'fuzz' },
    temporal: { kind: 'server', store: 'sqlite', cluster: false, ports: await freeServerPorts() },
    namespace: 'default',
    apiPort: await findFreePort(),
    workers: 1,
    serviceEnv: {
      ...SECRETS,
      THIRD_PARTIES: 'fake',
      // The fault-injection routes are dev-only and would make the fakes fail on purpose.
      FAULTS_ENABLED: 'false',
      // The fuzzer sends thousands of refused tokens from one address on purpose; the throttle that
      // would then answer 429 to everything has tests of its own (test/api/auth-throttle.unit.test.ts).
      AUTH_FAILURES_PER_MINUTE_PER_ADDRESS: '0',
      TEMPORAL_SET_CURRENT_VERSION: 'true',
      LOG_LEVEL: 'warn',
    },
    log: (line) => console.log(line),
  });
  let failed = 0;
  const proxy = await startSigningProxy(stack.apiUrl, SECRETS.PAYMENT_WEBHOOK_SECRET);
  try {
    await seedCatalog(stack.apiUrl);
    const callers = [
      { name: 'a customer', token: await signCustomerToken(SECRETS.CUSTOMER_JWT_SECRET, 'fuzz-customer') },
      { name: 'the operator', token: SECRETS.ADMIN_TOKEN, config: OPERATOR_CONFIG },
    ];
    for (const { name, token, config } of callers) {
      console.log(`\nSchemathesis as ${name}, ${examples} examples per operation …`);
      const code = await runSchemathesis(
        schemathesis,
        [
          `${proxy.url}/openapi.json`,
          '--url',
          proxy.url,
          '--header',
          `Authorization: Bearer ${token}`,
          '--checks',
          'all',
          '--max-examples',
          String(examples),
          '--seed',
          '1',
        ],
        config,
      );
      if (code !== 0) failed++;
    }
  } finally {
    proxy.stop();
    await stack.stop();
  }
  if (failed > 0) throw new StartupError(`Schemathesis found failures in ${failed} of 2 runs (see above)`);
  console.log('\nSchemathesis: no failure in either run.');
});

/** A product and a coupon, so that generated orders can also succeed, not only be refused. */
async function seedCatalog(apiUrl: string): Promise<void> {
  const headers = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const seeds = [
    ['/products/TEA', { name: 'Green tea', priceCents: 1200, stock: 1_000_000 }],
    ['/coupons/WELCOME', { discountCents: 200 }],
  ] as const;
  for (const [path, body] of seeds) {
    const res = await fetch(apiUrl + path, { method: 'PUT', headers, body: JSON.stringify(body) });
    if (!res.ok) throw new StartupError(`seeding ${path} answered ${res.status}`);
  }
}
