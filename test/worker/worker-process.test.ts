import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../dev/ports.js';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startTestMailpit, type TestMailpit } from '../helpers/mailpit.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { RECONCILIATION_SCHEDULE_ID, RECONCILIATION_WORKFLOW_TYPE } from '../../domain/messages.js';
import { SERVICE_SECRETS } from '../helpers/service-secrets.js';
import { fakePaymentId } from '../../dev/fakes/payment-provider.js';
import { newSigningSecret } from '../../webhooks/signing.js';

/**
 * The service's worker in its own process, configured by the environment, as the local stack runs it
 * (dev/worker.ts: the fakes handed in) against a real Temporal Server; the API runs in the test. Checks its logs, its /metrics and its shutdown.
 */
const TASK_QUEUE = 'orders-worker-process';
let h: OrderHarness;
let worker: WorkerProcess;
let mailpit: TestMailpit;
let metricsUrl: string;
let lines: string[];
/** The worker's /metrics takes the scraper's token (the admin token here: no METRICS_TOKEN is set). */
const scraper = { headers: { authorization: `Bearer ${SERVICE_SECRETS.ADMIN_TOKEN}` } };

beforeAll(async () => {
  h = await startOrderHarness({ temporal: 'real', taskQueue: TASK_QUEUE, inProcessWorker: false });
  mailpit = await startTestMailpit();
  worker = await startWorkerProcess(h, TASK_QUEUE, {
    PAYMENT_WINDOW: '2s',
    SHUTDOWN_GRACE: '20s',
    SMTP_URL: mailpit.smtpUrl,
    MAIL_FROM: 'Shop <orders@shop.example>',
  });
  ({ metricsUrl, lines } = worker);
}, 150_000);

afterAll(async () => {
  await worker?.stop();
  await mailpit?.stop();
  await h?.close();
});

/** Whether the workflow's history records the issueInvoice local activity as completed. */
async function invoiceCompletedOnServer(workflowId: string): Promise<boolean> {
  const events = (await h.clockStoppedClient.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.some((e) => {
    const marker = e.markerRecordedEventAttributes?.details;
    const data = marker?.data?.payloads?.[0]?.data;
    if (!data || marker?.result === undefined) return false;
    return (
      (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type === 'issueInvoice'
    );
  });
}

const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the worker process (dev/worker.ts)', () => {
  it('exits with its error when its start fails, instead of hanging on what it opened', async () => {
    const [metricsPort, sdkPort] = [await findFreePort(), await findFreePort()];
    const failing = spawn(process.execPath, ['--import', 'tsx', 'dev/worker.ts'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: {
        ...process.env,
        ...SERVICE_SECRETS,
        DATABASE_URL: h.databaseUrl,
        TEMPORAL_ADDRESS: h.env.address,
        TEMPORAL_NAMESPACE: `no-such-namespace-${TASK_QUEUE}`,
        TEMPORAL_TASK_QUEUE: TASK_QUEUE,
        THIRD_PARTIES: 'fake',
        WORKER_METRICS_PORT: String(metricsPort),
        TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}`,
        LOG_LEVEL: 'error',
      },
    });
    let logged = '';
    failing.stdout.on('data', (chunk: Buffer) => (logged += chunk.toString('utf8')));
    const exited = once(failing, 'exit');
    const timer = setTimeout(() => failing.kill('SIGKILL'), 45_000);
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    clearTimeout(timer);
    expect({ code, signal }).toEqual({ code: 1, signal: null });
    // Its own error, as a JSON line.
    expect(logged).toContain('"msg":"worker failed"');
    expect(logged).toContain('Namespace not found');
  });

  it('creates the reconciliation schedule at start, on its own task queue', async () => {
    expect(logged()).toContainEqual(
      expect.objectContaining({ msg: 'worker started', reconciliationSchedule: 'created' }),
    );
    const schedule = await h.env.client.schedule.getHandle(RECONCILIATION_SCHEDULE_ID).describe();
    expect(schedule.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: RECONCILIATION_WORKFLOW_TYPE,
      taskQueue: TASK_QUEUE,
    });
  });

  it('runs as a build of the Worker Deployment, and makes it current when told to', async () => {
    const started = logged().find((l) => l.msg === 'worker started')!;
    expect(started).toMatchObject({ deployment: 'order-lifecycle', buildId: expect.stringMatching(/^[0-9a-f]{16}$/) });
    await eventually(async () => logged().some((l) => l.msg === 'build is current' && l.buildId === started.buildId));
    const deployment = await h.env.client.workflowService.describeWorkerDeployment({
      namespace: 'default',
      deploymentName: 'order-lifecycle',
    });
    expect(deployment.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId).toBe(started.buildId);
  });

  it("serves its business metrics and the Temporal SDK's on /metrics, and logs JSON lines naming orderId and workflowId", async () => {
    const { sku } = await seedCatalog(h);
    // Paid at once, within its 2-s window however slow the other placement is.
    const paid = await placeOrder(h, { sku });
    expect(
      (await h.pay({ paymentId: fakePaymentId(paid.id), orderId: paid.id, amountCents: paid.totalCents })).status,
    ).toBe(202);
    const unpaid = await placeOrder(h, { sku });
    await eventually(
      async () => (await h.db.order.findUniqueOrThrow({ where: { id: unpaid.id } })).status === 'CANCELLED',
      20_000,
    );
    await eventually(
      async () => (await h.db.fulfillmentRecord.count({ where: { orderId: paid.id, status: 'DONE' } })) === 3,
      20_000,
    );

    const text = await (await fetch(metricsUrl, scraper)).text();
    expect(text).toMatch(/^orders_paid_total 1$/m);
    expect(text).toMatch(/^orders_cancelled_total\{reason="PAYMENT_TIMEOUT"\} 1$/m);
    expect(text).toMatch(/^order_cancel_lag_seconds_count 1$/m);
    const lag = Number(/^order_cancel_lag_seconds_sum (\S+)$/m.exec(text)![1]);
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(10);
    expect(text).toContain('# TYPE fulfillment_failures_total counter'); // none failed here: no series yet
    // The SDK's own, from Core's Prometheus exporter, merged into the same response.
    // The guarded cancel runs as a local activity (workflows/steps.ts), which the SDK reports apart.
    expect(text).toMatch(/^temporal_local_activity_execution_latency_bucket\{.*activity_type="cancelOrder"/m);
    expect(text).toMatch(/^temporal_workflow_completed\{.*workflow_type="OrderLifecycle"/m);

    // Forwarded SDK logs are buffered briefly (the Runtime sorts them by time): wait for the last one.
    await eventually(async () => lines.some((l) => l.includes('"order lifecycle finished"') && l.includes(paid.id)));
    await eventually(async () => lines.some((l) => l.includes('"order cancelled"') && l.includes(unpaid.id)));
    const records = logged(); // every line is JSON (JSON.parse throws otherwise)
    expect(records.length).toBeGreaterThan(5);
    const aboutOrders = records.filter((r) => r.orderId !== undefined);
    expect(aboutOrders.every((r) => r.workflowId === `order-${String(r.orderId)}`)).toBe(true);
    expect(aboutOrders).toContainEqual(
      expect.objectContaining({ msg: 'order cancelled', orderId: unpaid.id, sdkComponent: 'activity' }),
    );
    expect(aboutOrders).toContainEqual(
      expect.objectContaining({ msg: 'order lifecycle finished', orderId: paid.id, sdkComponent: 'workflow' }),
    );
    // The SDK's own lines (worker lifecycle) come through the same logger.
    expect(records).toContainEqual(expect.objectContaining({ sdkComponent: 'worker', name: 'worker' }));
  });

  it('counts an item an operator must act on by its kind, once, on the same /metrics', async () => {
    const { sku } = await seedCatalog(h);
    expect((await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true })).status).toBe(200);
    try {
      const order = await placeOrder(h, { sku });
      expect(
        (await h.pay({ paymentId: fakePaymentId(order.id), orderId: order.id, amountCents: order.totalCents })).status,
      ).toBe(202);
      await eventually(
        async () =>
          (await h.db.fulfillmentRecord.findFirst({ where: { orderId: order.id, step: 'LOYALTY' } }))?.status ===
          'FAILED',
        20_000,
      );
      // The SDK's exporter is read at scrape time: the run's counter may land a moment after the step's row.
      await eventually(async () =>
        /^order_attention_raised_total\{[^}]*kind="fulfillment"[^}]*\} 1$/m.test(
          await (await fetch(metricsUrl, scraper)).text(),
        ),
      );
    } finally {
      await h.admin('PUT', '/admin/faults/loyalty', { failAlways: false });
    }
  });

  it("runs the webhooks' job runner: an event written reaches the endpoint that hears of it, signed", async () => {
    const received: { headers: Record<string, string>; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const secret = newSigningSecret();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
      await h.db.webhookEndpoint.create({ data: { url, eventTypes: ['order.refund_failed'], secret } });
      const event = { id: randomUUID(), orderId: randomUUID(), seq: 1, type: 'order.refund_failed', data: {} };
      await h.db.orderEvent.create({ data: event });
      await eventually(async () => received.length === 1, 20_000);
      expect(received[0]!.headers['webhook-id']).toBe(event.id);
      expect(new Webhook(secret).verify(received[0]!.body, received[0]!.headers)).toMatchObject({
        type: 'order.refund_failed',
        data: { seq: 1 },
      });
    } finally {
      receiver.close();
    }
  });

  it('emails the customer from the outbox: an order placed with an address gets one email, its Message-ID the event', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, email: 'ada@example.com' });
    const placed = await h.db.orderEvent.findFirstOrThrow({ where: { orderId: order.id, type: 'order.placed' } });
    const ours = async () =>
      (await mailpit.received()).filter((m) => m.To.some((to) => to.Address === 'ada@example.com'));
    await eventually(async () => (await ours()).length >= 1, 20_000);
    const [email, ...more] = await ours();
    expect(more).toEqual([]);
    expect(email!.MessageID).toBe(`${placed.id}@shop.example`);
    expect(email!.Text).toContain(order.id);
  });

  it('on SIGTERM lets the in-flight activity finish its work (one attempt, step DONE), then exits 0', async () => {
    const { sku } = await seedCatalog(h);
    expect((await h.admin('PUT', '/admin/faults/invoice', { latencyMs: 4_000 })).status).toBe(200);
    const order = await placeOrder(h, { sku });
    expect(
      (await h.pay({ paymentId: fakePaymentId(order.id), orderId: order.id, amountCents: order.totalCents })).status,
    ).toBe(202);
    const invoice = () => h.db.fulfillmentRecord.findFirst({ where: { orderId: order.id, step: 'INVOICE' } });
    await eventually(async () => (await invoice())?.attempts === 1, 20_000); // the slow invoice call is running

    const stoppedAt = Date.now();
    worker.child.kill('SIGTERM');
    const [code] = await once(worker.child, 'close'); // 'close': its output is read to the end too
    expect(code).toBe(0);
    expect(await invoice()).toMatchObject({ status: 'DONE', attempts: 1 });
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    // The stopping worker completed the workflow task that ran it: its marker is in the history,
    // so no later task runs the call again.
    await eventually(async () => invoiceCompletedOnServer(`order-${order.id}`), 20_000);
    expect(logged().at(-1)).toMatchObject({ msg: 'worker stopped' });
  });
});
