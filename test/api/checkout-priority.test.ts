import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * On a Temporal server that cannot change a running workflow's priority (here the time-skipping
 * test server; servers before 1.30 likewise), checkout still works: the API says so once and
 * leaves priorities alone for a while instead of failing or repeating itself for every order.
 * Lowering on Temporal Server 1.32: test/workflows/order-lifecycle.real-server.test.ts.
 */
const lines: Array<{ msg?: string; level?: number }> = [];
let h: OrderHarness;
beforeAll(async () => {
  const capture = { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) };
  h = await startOrderHarness({
    taskQueue: 'orders-checkout-priority',
    logger: createLogger('api-test', 'info', capture),
  });
});
afterAll(async () => {
  await h?.close();
});

it('places orders on a server that cannot lower their priority, and says so once', async () => {
  const { sku } = await seedCatalog(h, { stock: 10 });
  const cannot = () => lines.filter((l) => l.msg?.includes("cannot change a running workflow's priority"));
  await placeOrder(h, { sku });
  await eventually(async () => cannot().length === 1);
  await placeOrder(h, { sku });
  await placeOrder(h, { sku });
  await new Promise((resolve) => setTimeout(resolve, 300)); // the lowering runs after the answer
  expect(cannot()).toHaveLength(1);
  expect(lines.filter((l) => l.msg?.includes("could not lower a placed order's priority"))).toEqual([]);
});
