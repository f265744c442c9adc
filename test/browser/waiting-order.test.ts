import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId } from '../../domain/messages.js';
import { WaitingForKey } from '../../domain/search-attributes.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { ADMIN_TOKEN, startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { openTab, shown, signInAsOperator, workflowListUrl } from '../helpers/web-ui.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/**
 * What an operator sees of a stuck order in the real Temporal Web UI: where its run waits, since
 * when, and what the provider last answered. The worker is worker/main.ts in its own process, on the
 * service's default settings, as production runs it (its stack trace limit is one of them).
 */
const skip = browserSkipReason();
if (skip) console.warn(`browser tests skipped: ${skip}`);

const TASK_QUEUE = 'orders-browser-waiting';
let h: OrderHarness;
let worker: WorkerProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

describe.skipIf(skip !== undefined)('in headless Chromium, an order held at its deadline', () => {
  beforeAll(async () => {
    [h, browser] = await Promise.all([
      startOrderHarness({ temporal: 'real', taskQueue: TASK_QUEUE, webUi: true, inProcessWorker: false }),
      launchBrowser(),
    ]);
    worker = await startWorkerProcess(h, TASK_QUEUE, { PAYMENT_WINDOW: '3s', FAKE_PAYMENTS: 'cancellable' });
    page = await browser.context.newPage();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await h?.close();
  });

  it("Temporal Web UI: the WaitingFor filter finds an order the provider's outage holds, whose Call Stack and details say where it waits, since when and the provider's last answer", async () => {
    const customerId = `held-${randomUUID().slice(0, 8)}`;
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, customerId });
    // The provider goes down once the order's payment exists: at the deadline it cannot close it.
    expect((await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 })).status).toBe(200);
    try {
      // Signed in, the operator's browser holds the session cookie the Web UI's codec calls carry:
      // the details and the stack trace are payloads, encrypted in Temporal.
      await signInAsOperator(page, h.baseUrl, ADMIN_TOKEN);
      const filter = `WaitingFor = "PROVIDER_CLOSING" AND WorkflowId = "${orderWorkflowId(order.id)}"`;
      await page.goto(workflowListUrl(h.webUiUrl!, filter));
      await listed(page, orderWorkflowId(order.id));
      await page
        .getByRole('link', { name: orderWorkflowId(order.id) })
        .first()
        .click();

      await openTab(page, 'User Metadata');
      await shown(page, 'Waiting for: the payment provider to close the payment');
      const details = await shown(
        page,
        /Closing the payment at the provider since \S+Z \(last answer: unavailable, \d+ tr(y|ies)\)/,
      );
      const since = /Closing the payment at the provider since (\S+Z)/.exec(details)![1]!;
      expect(Date.parse(since)).toBeGreaterThanOrEqual(Date.parse(order.expiresAt)); // the closing began at the deadline

      // Where the run waits: the __stack_trace query, answered by the worker's workflow sandbox.
      await openTab(page, 'Call Stack');
      await shown(page, /at closePaymentFirst \(\S*workflows\/payment-closing\.ts:\d+/);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    // The provider back, the order is cancelled and the run waits on nothing out of the ordinary.
    const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    expect(await handle.result()).toMatchObject({ status: 'CANCELLED' });
    expect((await handle.describe()).typedSearchAttributes.get(WaitingForKey)).toBeUndefined();
  }, 300_000); // the provider is asked again with a backoff, up to 3 minutes apart
});

/** The workflow list shows `workflowId`: loaded again until it does, since a run is listed only once it waits. */
async function listed(page: Page, workflowId: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  const link = page.getByRole('link', { name: workflowId }).first();
  for (;;) {
    // Each load takes seconds on a busy machine: give it time before loading again.
    const found = await link.waitFor({ timeout: 10_000 }).then(
      () => true,
      () => false,
    );
    if (found) return;
    if (Date.now() > end) throw new Error(`${workflowId} is not listed on ${page.url()}`);
    await page.reload();
  }
}
