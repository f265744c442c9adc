import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, it } from 'vitest';
import { orderWorkflowId } from '../../domain/messages.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { ENCRYPTED_HISTORY, HISTORIES_DIR, historyToFixture } from './history-fixtures.js';

/**
 * Part of `npm run record:histories`: one order paid and fulfilled, recorded with the payloads
 * encrypted (the harness's worker and clients seal them with the tests' key, test/helpers/payload-keys.ts).
 * The replay test replays it through the codec, and shows that without the codec it cannot be.
 */
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-record-encrypted' });
});
afterAll(async () => {
  await h?.close();
});

it('records an order whose payloads are encrypted', async () => {
  const { sku, couponCode } = await seedCatalog(h);
  const order = await placeOrder(h, { sku, couponCode, customerId: 'encrypted-history-customer' });
  await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents });
  const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
  await handle.result();
  await writeFile(new URL(`${ENCRYPTED_HISTORY}.json`, HISTORIES_DIR), historyToFixture(await handle.fetchHistory()));
  console.log(`recorded ${ENCRYPTED_HISTORY}.json`);
});
