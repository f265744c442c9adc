import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { orderWorkflowId } from '../../domain/messages.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * What Temporal holds of an order, read as anyone who reaches its store or Web UI reads it (a client
 * without the codec): no Stripe-style client secret, no coupon code, no customer id in clear, neither
 * in the payloads (encrypted) nor in the search attributes (indexed in clear, so none carries them).
 */
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-encrypted-history', payments: 'cancellable' });
});
afterAll(async () => {
  await h?.close();
});

/** Every string and every byte string of a value, as text: a secret stored in clear shows up in it. */
function allText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('latin1');
  if (value === null || typeof value !== 'object') return String(value);
  return Object.values(value).map(allText).join('\n');
}

it("keeps an order's client secret, coupon code and customer id out of its history and search attributes", async () => {
  const customerId = `encrypted-${randomUUID()}`;
  const { sku, couponCode } = await seedCatalog(h);
  const order = await placeOrder(h, { sku, couponCode, customerId });
  const { clientSecret } = (await h.asCustomer(customerId, 'GET', `/orders/${order.id}`)).body.payment as {
    clientSecret: string;
  };
  expect(clientSecret).toMatch(/_secret_/);
  await h.asCustomer(customerId, 'POST', `/orders/${order.id}/cancel`);
  await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();

  const withoutCodec = new Client({ connection: h.env.connection, namespace: h.env.namespace ?? 'default' });
  const handle = withoutCodec.workflow.getHandle(orderWorkflowId(order.id));
  const stored = allText(await handle.fetchHistory()) + allText((await handle.describe()).raw);
  expect(stored).toContain(order.id); // the walk reads what is in clear: the workflow id is
  for (const secret of [clientSecret, couponCode, customerId]) expect(stored).not.toContain(secret);

  // With the codec the same history reads: the customer's placement is there, decrypted.
  const { events } = await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).fetchHistory();
  const placement = events!.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes)!;
  const [request] = await h.env.client.options.loadedDataConverter.payloadCodecs[0]!.decode(
    placement.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!.input!.args!.payloads!,
  );
  expect(Buffer.from(request!.data!).toString()).toContain(customerId);
});
