import type { Page } from 'playwright-core';

/**
 * The Temporal Web UI in a browser: it renders summaries and details as markdown in iframes, so
 * text is looked for in every frame. What a workflow's page shows comes from queries the UI sends
 * once per page load, which a loaded worker may answer late: the page is reloaded now and then.
 */

/** Waits until `text` (a string, or a pattern) is shown on the page; returns the frame text that showed it. */
export async function shown(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    for (const frame of page.frames()) {
      const body = await frame.textContent('body').catch(() => null);
      if (body !== null && (typeof text === 'string' ? body.includes(text) : text.test(body))) return body;
    }
    if (Date.now() > end) throw new Error(`"${String(text)}" is not shown on ${page.url()}`);
    if (attempt % 20 === 0) await page.reload();
    await page.waitForTimeout(250);
  }
}

/** Opens a tab of a workflow's page ("User Metadata", "Call Stack"), a link or a tab depending on the UI's version. */
export async function openTab(page: Page, name: string): Promise<void> {
  await page.getByRole('link', { name }).or(page.getByRole('tab', { name })).first().click();
}

/** The workflow list filtered by `query` (a visibility query), as an operator pastes it into the filter. */
export function workflowListUrl(webUiUrl: string, query: string): string {
  return `${webUiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`;
}

/**
 * Signs the browser in on the service's orders page (`baseUrl`/) as the operator, unless it is
 * already: the session cookie it gets is what the Web UI's codec calls carry, so payloads show decoded.
 */
export async function signInAsOperator(page: Page, baseUrl: string, adminToken: string): Promise<void> {
  await page.goto(baseUrl + '/');
  // The page asks for the token only once the API has refused it a session: wait for either answer.
  await page.locator('#sign-in:visible, #sign-out:visible').first().waitFor({ timeout: 5_000 });
  if (await page.locator('#sign-in').isVisible()) {
    await page.fill('#admin-token', adminToken);
    await page.click('#sign-in button');
  }
  await page.locator('#sign-out').waitFor({ state: 'visible', timeout: 5_000 });
}
