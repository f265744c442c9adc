import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../lib/tracing.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** One trace from the webhook's HTTP request through the `paid` signal to the activity that settles it. */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let h: OrderHarness;
beforeAll(async () => {
  tracing = startTracing('order-test', { exporter });
  h = await startOrderHarness({ temporal: 'real', taskQueue: 'orders-tracing', tracing });
});
afterAll(async () => {
  await h?.close();
  await tracing?.shutdown();
});

it('traces HTTP request → signal handler, and the order request → workflow → activities', async () => {
  const { sku } = await seedCatalog(h);
  const order = await placeOrder(h, { sku });
  expect((await h.pay({ paymentId: `p-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status).toBe(
    202,
  );
  await eventually(async () => exporter.getFinishedSpans().some((s) => s.name === 'RunActivity:settlePayment'), 20_000);

  const spans = exporter.getFinishedSpans();
  const traceOf = (name: string) => {
    const root = spans.find((s) => s.name === name);
    expect(root, name).toBeDefined();
    return spans.filter((s) => s.spanContext().traceId === root!.spanContext().traceId).map((s) => s.name);
  };
  // The webhook's request reaches the workflow's signal handler in its trace ...
  expect(traceOf('POST /payments/callback')).toEqual(
    expect.arrayContaining(['POST /payments/callback', 'SignalWorkflow:paid', 'HandleSignal:paid']),
  );
  // ... and the workflow's main loop, whose trace began with the order's request, runs the activities.
  expect(traceOf('POST /orders')).toEqual(
    expect.arrayContaining(['POST /orders', 'RunActivity:placeOrder', 'RunActivity:settlePayment']),
  );
});
