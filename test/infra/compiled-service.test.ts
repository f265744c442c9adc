import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_WEBHOOK_PATH } from '../../api/endpoint-table.js';
import { buildIdOf } from '../../worker/deployment.js';
import { signCustomerToken } from '../../dev/customer-token.js';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { findFreePort } from '../../dev/ports.js';
import { startStripeMock, type RunningStripeMock } from '../../dev/stripe-mock.js';
import { eventually } from '../helpers/eventually.js';
import { startTestMailpit, type TestMailpit } from '../helpers/mailpit.js';
import { PAYLOAD_ENCRYPTION_KEYS } from '../helpers/payload-keys.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The production build as the image runs it: `npm run build` (nothing of dev/ in it), then `node
 * dist/worker/main.js` and `node dist/api/server.js` (no TypeScript at run time, the workflow bundle
 * built once at build time) on their production third parties: Stripe (stripe-mock), the customers'
 * email (Mailpit), and the shop's invoicing and loyalty systems as webhook endpoints with those
 * roles (a receiver here). A real PostgreSQL without the fakes' schema and a real Temporal server;
 * orders carried end to end over HTTP.
 */
const TASK_QUEUE = 'orders-compiled';
const SECRETS = {
  ADMIN_TOKEN: 'compiled-admin-token-0123456789abcdef',
  PAYMENT_WEBHOOK_SECRET: 'compiled-webhook-secret-0123456789abc',
  CUSTOMER_JWT_SECRET: 'compiled-customer-jwt-secret-0123456789',
  ORDER_ID_SECRET: 'compiled-order-id-secret-0123456789abcdef',
  // The harness's key: the compiled worker and API open what its client sealed, and it what they sealed.
  PAYLOAD_ENCRYPTION_KEYS,
};
let h: OrderHarness;
let api: string;
/** Stands in for an OpenTelemetry collector: the OTLP/HTTP (JSON) export requests it was sent. */
let collector: Server;
const exported: string[] = [];
const processes: Array<{ name: string; child: ChildProcess; lines: string[] }> = [];
const STRIPE = {
  STRIPE_SECRET_KEY: 'sk_test_0123456789compiledServiceKey',
  STRIPE_WEBHOOK_SECRET: 'whsec_compiled_0123456789abcdefghijklmnop',
  // stripe-mock answers with test-mode fixtures, and the service runs under NODE_ENV=production.
  STRIPE_ALLOW_TEST_KEYS: 'true',
};
let stripeMock: RunningStripeMock;
let mailpit: TestMailpit;
/** Stands in for the shop's invoicing and loyalty systems: every request, by path. */
let shopSystems: Server;
const delivered: Array<{ path: string; headers: Record<string, string>; body: string }> = [];

function startCompiled(name: string, entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [entry], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  // Whole lines: a pipe's chunks may end in the middle of one, which JSON.parse would then refuse.
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (line !== '') lines.push(line);
    });
  }
  processes.push({ name, child, lines });
  return lines;
}

beforeAll(async () => {
  const build = spawnSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 240_000 });
  expect(build.status, `${build.stdout}\n${build.stderr}`).toBe(0);
  h = await startOrderHarness({ temporal: 'real', taskQueue: TASK_QUEUE, inProcessWorker: false });
  // The service needs nothing of the local fakes, their tables included.
  await h.db.$executeRawUnsafe('DROP SCHEMA fakes CASCADE');
  [stripeMock, mailpit] = await Promise.all([startStripeMock(), startTestMailpit()]);
  shopSystems = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      delivered.push({ path: req.url ?? '', headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => shopSystems.listen(0, '127.0.0.1', resolve));
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') exported.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const [apiPort, metricsPort, sdkPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
  const env = {
    ...SECRETS,
    NODE_ENV: 'production',
    TRUST_PROXY: 'none',
    DATABASE_URL: h.databaseUrl,
    TEMPORAL_ADDRESS: h.env.address,
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    THIRD_PARTIES: 'stripe',
    ...STRIPE,
    STRIPE_API_BASE: stripeMock.apiBase,
    SMTP_URL: mailpit.smtpUrl,
    MAIL_FROM: 'Compiled shop <orders@shop.example>',
    WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true',
    TEMPORAL_SET_CURRENT_VERSION: 'true',
    // Long enough for the paid order's payment under load; the unpaid order's cancel waits it out.
    PAYMENT_WINDOW: '20s',
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as net.AddressInfo).port}`,
  };
  startCompiled('worker', 'dist/worker/main.js', {
    ...env,
    WORKER_METRICS_PORT: String(metricsPort),
    TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}`,
  });
  // No per-customer limits: the test's customer reads its orders as often as eventually() polls.
  startCompiled('api', 'dist/api/server.js', {
    ...env,
    PORT: String(apiPort),
    ORDERS_PER_MINUTE_PER_CLIENT: '0',
    READS_PER_MINUTE_PER_CLIENT: '0',
  });
  api = `http://127.0.0.1:${apiPort}`;
  await eventually(
    async () =>
      processes.every((p) => p.lines.some((l) => l.includes('"worker started"') || l.includes('"API listening"'))),
    90_000,
  );
}, 360_000);

afterAll(async () => {
  for (const { child } of processes) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await h?.close();
  await new Promise((resolve) => collector?.close(resolve));
  await new Promise((resolve) => shopSystems?.close(resolve));
  await Promise.all([stripeMock?.stop(), mailpit?.stop()]);
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(api + path, {
    method,
    body: raw,
    headers: { ...(raw ? { 'content-type': 'application/json' } : {}), ...headers },
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

/** The `payment_intent.succeeded` Stripe would post for the order's intent, signed with the webhook's secret. */
function paymentSucceeded(order: { id: string; totalCents: number; paymentId: string }, customerId: string) {
  const payload = JSON.stringify({
    id: `evt_compiled_${order.id.slice(0, 8)}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: order.paymentId,
        object: 'payment_intent',
        amount: order.totalCents,
        amount_received: order.totalCents,
        currency: 'eur',
        status: 'succeeded',
        livemode: false,
        latest_charge: null,
        next_action: null,
        metadata: { order_id: order.id, customer_id: customerId },
      },
    },
  });
  const signature = new Stripe(STRIPE.STRIPE_SECRET_KEY).webhooks.generateTestHeaderString({
    payload,
    secret: STRIPE.STRIPE_WEBHOOK_SECRET,
  });
  return { payload, signature };
}

describe('the compiled service (npm run build, node dist/…)', () => {
  it('the build holds nothing of dev/', () => {
    expect(existsSync(join(PROJECT_ROOT, 'dist', 'worker', 'main.js'))).toBe(true);
    expect(existsSync(join(PROJECT_ROOT, 'dist', 'dev'))).toBe(false);
  });

  it('the worker loads the workflow bundle built at build time instead of bundling at start', () => {
    const worker = processes.find((p) => p.name === 'worker')!;
    expect(worker.lines.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({
        msg: 'worker started',
        workflowCode: 'prebuilt bundle',
        tracing: true,
        buildId: buildIdOf(readFileSync(join(PROJECT_ROOT, 'dist', 'workflow-bundle.traced.js'), 'utf8')),
      }),
    );
    expect(worker.lines.some((l) => l.includes('Workflow bundle created'))).toBe(false);
  });

  it('the compiled loader finds each prebuilt bundle: the plain one without tracing, the traced one with it', async () => {
    const compiled = join(PROJECT_ROOT, 'dist', 'worker', 'workflow-bundle.js');
    const { loadWorkflowBundle } = (await import(compiled)) as typeof import('../../worker/workflow-bundle.js');
    const built = (name: string) => readFileSync(join(PROJECT_ROOT, 'dist', name), 'utf8');
    const [plain, traced] = [await loadWorkflowBundle(false), await loadWorkflowBundle(true)];
    expect(plain).toEqual({ code: built('workflow-bundle.js'), prebuilt: true });
    expect(traced).toEqual({ code: built('workflow-bundle.traced.js'), prebuilt: true });
    expect(traced.code).not.toBe(plain.code);
  });

  it('carries one order to PAID and fulfilled and another to CANCELLED, over HTTP, on its production third parties', async () => {
    const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
    const customerId = 'compiled-customer';
    const customer = { authorization: `Bearer ${await signCustomerToken(SECRETS.CUSTOMER_JWT_SECRET, customerId)}` };
    // The shop's invoicing and loyalty systems: each hears of order.paid through its fulfilment step.
    const secrets: Record<string, string> = {};
    for (const step of ['invoice', 'loyalty']) {
      const created = await call(
        'POST',
        '/webhook-endpoints',
        {
          url: `http://127.0.0.1:${(shopSystems.address() as net.AddressInfo).port}/${step}`,
          eventTypes: ['order.paid'],
          fulfillmentStep: step,
        },
        admin,
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      secrets[`/${step}`] = created.body.secret;
    }
    expect(
      (await call('PUT', '/products/COMPILED-TEA', { name: 'Tea', priceCents: 700, stock: 5 }, admin)).status,
    ).toBe(200);
    const paid = await call(
      'POST',
      '/orders',
      { items: [{ sku: 'COMPILED-TEA', quantity: 2 }], email: 'paid@customer.example' },
      customer,
    );
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    // The worker creates the order's PaymentIntent at stripe-mock; the customer pays it, and Stripe says so.
    let paymentId: string | undefined;
    await eventually(async () => {
      paymentId = (await call('GET', `/orders/${paid.body.id}`, undefined, customer)).body.payment?.paymentId;
      return paymentId !== undefined;
    }, 30_000);
    const { payload, signature } = paymentSucceeded({ ...paid.body, paymentId: paymentId! }, customerId);
    const accepted = await fetch(api + STRIPE_WEBHOOK_PATH, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    const unpaid = await call(
      'POST',
      '/orders',
      { items: [{ sku: 'COMPILED-TEA', quantity: 1 }], email: 'unpaid@customer.example' },
      customer,
    );
    expect(unpaid.status).toBe(201);

    await eventually(async () => {
      const order = (await call('GET', `/orders/${paid.body.id}`, undefined, customer)).body;
      return order.status === 'PAID' && Object.values(order.fulfillment ?? {}).every((s) => s === 'DONE');
    }, 30_000);
    await eventually(
      async () => (await call('GET', `/orders/${unpaid.body.id}`, undefined, customer)).body.status === 'CANCELLED',
      60_000,
    );
    // Compensation follows the cancel: the unpaid order's unit comes back.
    await eventually(async () => (await call('GET', '/products/COMPILED-TEA')).body.available === 3, 30_000);
    // The sales figures are the operator's to read.
    expect((await call('GET', '/products/COMPILED-TEA', undefined, admin)).body).toMatchObject({
      available: 3,
      reserved: 0,
      sold: 2,
    });

    // Invoicing and loyalty each took the paid order's order.paid once, signed with its own endpoint's secret.
    expect(delivered.map((d) => d.path).sort()).toEqual(['/invoice', '/loyalty']);
    for (const { path, headers, body } of delivered)
      expect(new Webhook(secrets[path]!).verify(body, headers)).toMatchObject({
        type: 'order.paid',
        data: expect.objectContaining({ orderId: paid.body.id }),
      });
    // The customers' emails went through the mail server, each once: the payment's, and the cancel's.
    const sent = async (to: string, subject: RegExp) =>
      (await mailpit.received()).filter((m) => m.To[0]?.Address === to && subject.test(m.Subject)).length;
    await eventually(async () => (await sent('paid@customer.example', /^Payment received/)) === 1, 30_000);
    await eventually(async () => (await sent('unpaid@customer.example', /has been cancelled$/)) === 1, 30_000);
  });

  it('serves the orders page, its stylesheet and its script: tsc compiles none of them', async () => {
    for (const [path, type] of [
      ['/', 'text/html'],
      ['/page.css', 'text/css'],
      ['/page.js', 'text/javascript'],
    ]) {
      const res = await fetch(api + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain(type);
    }
    expect(await (await fetch(api + '/')).text()).toContain('<title>Orders</title>');
  });

  it('both stop cleanly on SIGTERM', async () => {
    for (const { child } of processes) child.kill('SIGTERM');
    const codes = await Promise.all(processes.map(async ({ child }) => (await once(child, 'exit'))[0]));
    expect(codes).toEqual([0, 0]);
  });

  it("with OTLP set, the spans include the workflow's own (its bundle has the tracing interceptors)", () => {
    // Flushed at the latest by the SIGTERM above. Only the interceptors inside the workflow bundle
    // make the workflow's spans; the activity's come from the worker, bundle or not.
    const spans = new Set(exported.flatMap((body) => [...body.matchAll(/"name":"([^"]+)"/g)].map((m) => m[1]!)));
    expect([...spans]).toEqual(
      expect.arrayContaining([`POST ${STRIPE_WEBHOOK_PATH}`, 'RunActivity:settlePayment', 'HandleSignal:paid']),
    );
    expect([...spans].some((name) => name.startsWith('RunWorkflow:'))).toBe(true);
  });
});

describe('the compiled service copied on its own: dist/ and its dependencies, no checkout beside it', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'order-lifecycle-no-dev-'));
    await cp(join(PROJECT_ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    await copyFile(join(PROJECT_ROOT, 'package.json'), join(dir, 'package.json'));
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs an entry point of the copy to its end: its exit code and the lines it wrote. */
  function runCopy(entry: string, env: Record<string, string>): { status: number | null; lines: string[] } {
    const run = spawnSync(process.execPath, [entry], {
      cwd: dir,
      env: {
        ...process.env,
        ...SECRETS,
        NODE_ENV: 'production',
        TRUST_PROXY: 'none',
        DATABASE_URL: h.databaseUrl,
        TEMPORAL_ADDRESS: h.env.address,
        LOG_LEVEL: 'info',
        ...env,
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: run.status, lines: `${run.stdout}${run.stderr}`.split('\n').filter(Boolean) };
  }

  it('the worker with THIRD_PARTIES=fake exits 1 with one line: it runs on Stripe only, the fakes on the local stack', () => {
    const { status, lines } = runCopy('dist/worker/main.js', { THIRD_PARTIES: 'fake' });
    expect(status).toBe(1);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringMatching(
          /^THIRD_PARTIES=fake: the worker takes payments through Stripe only; .*the local fakes run only on npm start's stack/,
        ),
      }),
    ]);
  });

  it('the API with FAULTS_ENABLED=true exits 1 with one line: the service has no fault injection, turn it off', () => {
    // Fault injection is the embedded stack's alone, and only its entry (dev/api.ts) hands it in.
    const { status, lines } = runCopy('dist/api/server.js', {
      THIRD_PARTIES: 'fake',
      FAULTS_ENABLED: 'true',
      NODE_ENV: '',
      EMBEDDED_STACK: 'true',
    });
    expect(status).toBe(1);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringMatching(
          /^FAULTS_ENABLED=true: the service has no fault injection.*Set FAULTS_ENABLED=false/,
        ),
      }),
    ]);
  });
});

describe('the compiled API outside the embedded stack, with a public, short or missing secret', () => {
  let connections = 0;
  let listener: net.Server;
  let address: string;
  beforeAll(async () => {
    // Stands in for PostgreSQL and Temporal: the API must stop before it connects to either.
    listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(listener.address() as net.AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => listener.close(resolve)));

  async function runApi(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, ['dist/api/server.js'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...SECRETS,
        NODE_ENV: 'production',
        TRUST_PROXY: 'none',
        DATABASE_URL: `postgresql://orders:orders@${address}/orders`,
        TEMPORAL_ADDRESS: address,
        PORT: String(await findFreePort()),
        LOG_LEVEL: 'info',
        ...env,
      },
    });
    let output = '';
    for (const stream of [child.stdout, child.stderr])
      stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    return { code, output };
  }

  const cases: Array<[string, Record<string, string>]> = [
    ['ADMIN_TOKEN', { ADMIN_TOKEN: '' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'dev-admin-token' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'x'.repeat(31) }],
    ['PAYMENT_WEBHOOK_SECRET', { PAYMENT_WEBHOOK_SECRET: 'dev-webhook-secret' }],
    ['CUSTOMER_JWT_SECRET', { CUSTOMER_JWT_SECRET: 'dev-customer-jwt-secret-not-for-production' }],
    ['ORDER_ID_SECRET', { ORDER_ID_SECRET: '' }],
    ['METRICS_TOKEN', { METRICS_TOKEN: 'short-metrics-token' }],
    ['FAULTS_ENABLED', { THIRD_PARTIES: 'fake', FAULTS_ENABLED: 'true' }],
  ];
  for (const [variable, env] of cases) {
    it(`${JSON.stringify(env)}: exits 1 with one line naming ${variable}, having connected to nothing`, async () => {
      const before = connections;
      const { code, output } = await runApi(env);
      expect(code).toBe(1);
      const lines = output.split('\n').filter(Boolean);
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({
          level: 50,
          msg: expect.stringMatching(new RegExp(`^${variable}: .*outside npm start's embedded stack`)),
        }),
      ]);
      for (const value of Object.values(env)) if (value.length > 5) expect(output).not.toContain(value);
      expect(connections - before).toBe(0);
    }, 40_000);
  }

  it('the same API with every secret set of its own gets as far as connecting', async () => {
    const before = connections;
    const { code } = await runApi({});
    expect(code).toBe(1); // the stand-in is no database
    expect(connections - before).toBeGreaterThan(0);
  }, 60_000);
});
