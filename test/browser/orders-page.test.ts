import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { ADMIN_TOKEN, startOrderHarness, WEBHOOK_SECRET, type OrderHarness } from '../helpers/order-harness.js';
import { openTab, shown, signInAsOperator, workflowListUrl } from '../helpers/web-ui.js';

/**
 * The orders page and the Temporal Web UI in headless Chromium (Debian's package, driven by
 * playwright-core), against the whole service on a real Temporal Server with its Web UI.
 */
const skip = browserSkipReason();
if (skip) console.warn(`browser tests skipped: ${skip}`);

const WINDOW_MS = 8_000;
let h: OrderHarness;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
/** What the browser reported breaking the page's Content-Security-Policy (helmet's): must stay empty. */
const cspViolations: string[] = [];

describe.skipIf(skip !== undefined)('in headless Chromium', () => {
  beforeAll(async () => {
    [h, browser] = await Promise.all([
      startOrderHarness({ temporal: 'real', taskQueue: 'orders-browser', paymentWindowMs: WINDOW_MS, webUi: true }),
      launchBrowser(),
    ]);
    page = await browser.context.newPage();
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('orders page: shows nothing until an operator signs in, and keeps no admin token in the browser', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await page.goto(h.baseUrl + '/');
    await browser.context.clearCookies();
    await page.reload();
    await page.locator('#sign-in').waitFor({ state: 'visible', timeout: 5_000 });
    await page.fill('#admin-token', 'not-the-admin-token');
    await page.click('#sign-in button');
    await page.locator('#sign-in').waitFor({ state: 'visible', timeout: 5_000 }); // refused: asked again
    expect(await page.locator('tr.order').count()).toBe(0);

    await page.fill('#admin-token', ADMIN_TOKEN);
    await page.click('#sign-in button');
    await page.locator(`#order-${order.id} .status.UNPAID`).waitFor({ timeout: 5_000 });
    expect(await page.locator('#sign-in').isHidden()).toBe(true);
    // Signed in by an HttpOnly session cookie: no storage and no script-readable cookie holds the token.
    const stored = await page.evaluate<string>(
      'JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage), document.cookie])',
    );
    expect(stored).not.toContain(ADMIN_TOKEN);
    expect(stored).toBe('[[],[],""]');
    const [session] = (await browser.context.cookies(h.baseUrl)).filter((c) => c.name === 'operator_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(session!.value).not.toContain(ADMIN_TOKEN);
    // Signed out, the page asks again and shows nothing.
    await page.click('#sign-out');
    await page.locator('#sign-in').waitFor({ state: 'visible', timeout: 5_000 });
    await page.reload();
    await page.locator('#sign-in').waitFor({ state: 'visible', timeout: 5_000 });
    expect(await page.locator('tr.order').count()).toBe(0);
    expect(cspViolations).toEqual([]);
  });

  it('orders page: an order counts down, "simulate payment" sends a signed callback, and it turns PAID', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, customerId: `page-${randomUUID().slice(0, 8)}` });
    await openOrdersPage();
    const row = page.locator(`#order-${order.id}`);
    await row.locator('.status.UNPAID').waitFor({ timeout: 5_000 });
    expect(await row.locator('.countdown').textContent()).toMatch(/^00:0\d left$/);
    expect(await row.locator('a.workflow-link').getAttribute('href')).toBe(
      `${h.webUiUrl}/namespaces/default/workflows/order-${order.id}`,
    );

    await row.locator('button.simulate-payment').click();
    await row.locator('.status.PAID').waitFor({ timeout: 10_000 });
    await row.locator('.fulfillment', { hasText: '3/3' }).waitFor({ timeout: 15_000 });
    const stored = await h.db.payment.findMany({ where: { orderId: order.id } });
    expect(stored).toMatchObject([{ amountCents: order.totalCents, status: 'CAPTURED' }]);
    // The signing happened on the server: nothing the browser loads carries the secret.
    const asOperator = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    for (const path of ['/', '/page.js', '/ui/config'])
      expect(await (await fetch(h.baseUrl + path, asOperator)).text()).not.toContain(WEBHOOK_SECRET);
    expect(cspViolations).toEqual([]);
  });

  it('orders page: an order left unpaid shows CANCELLED once its window has passed', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await openOrdersPage();
    const row = page.locator(`#order-${order.id}`);
    await row.locator('.status.UNPAID').waitFor({ timeout: 5_000 });
    await row.locator('.status.CANCELLED', { hasText: 'PAYMENT_TIMEOUT' }).waitFor({ timeout: WINDOW_MS + 15_000 });
    const cancelledAt = (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).cancelledAt!;
    expect(cancelledAt.getTime()).toBeGreaterThanOrEqual(Date.parse(order.expiresAt));
    expect(
      (await h.workerMetrics.cancelLag.get()).values.find((v) => v.labels.le === '+Inf')!.value,
    ).toBeGreaterThanOrEqual(1);
  });

  it("Temporal Web UI: a list filter finds the order's workflow, which shows its summary and what it waits for, decrypted for a signed-in operator", async () => {
    const customerId = `ui-${randomUUID().slice(0, 8)}`;
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, customerId, quantity: 3 });
    await openOrdersPage(); // signs in: the session cookie the Web UI's codec calls carry
    const query = `WorkflowId = "order-${order.id}" AND OrderStatus = "UNPAID"`;
    await page.goto(workflowListUrl(h.webUiUrl!, query));
    const link = page.getByRole('link', { name: `order-${order.id}` });
    await link.first().waitFor({ timeout: 30_000 });
    await link.first().click();
    // The workflow's page, tab "User Metadata": the summary set at start, the details the workflow keeps
    // current, both encrypted in Temporal and decrypted by the API's codec endpoint for this operator.
    await openTab(page, 'User Metadata');
    await shown(page, `Order ${order.id} for ${customerId}: 3 × ${sku}`);
    await shown(page, `Waiting for: payment until ${order.expiresAt}`);

    // Not signed in, the same page shows the ciphertext Temporal holds: no customer id anywhere.
    await browser.context.clearCookies();
    await page.reload();
    await openTab(page, 'User Metadata');
    await expect(shown(page, customerId, 10_000)).rejects.toThrow(/is not shown/);
  });
});

/** The orders page as a signed-in operator: once signed in, the session cookie does it. */
function openOrdersPage(): Promise<void> {
  return signInAsOperator(page, h.baseUrl, ADMIN_TOKEN);
}
