import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../lib/tracing.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** One trace from the webhook's HTTP request through the `paid` signal's handler to the activity that settles it. */
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

it('traces HTTP request → signal handler → settling activity, and the order request → workflow → placement', async () => {
  const { sku } = await seedCatalog(h);
  const order = await placeOrder(h, { sku });
  expect((await h.pay({ paymentId: `p-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status).toBe(
    202,
  );
  const finished = (name: string) => exporter.getFinishedSpans().some((s) => s.name === name);
  await eventually(async () => finished('RunActivity:settlePayment') && finished('HandleSignal:paid'), 20_000);

  const spans = exporter.getFinishedSpans();
  const traceOf = (name: string) => {
    const root = spans.find((s) => s.name === name);
    expect(root, name).toBeDefined();
    return spans.filter((s) => s.spanContext().traceId === root!.spanContext().traceId).map((s) => s.name);
  };
  // The webhook's request reaches the workflow's signal handler, and the activity it settles the payment with ...
  expect(traceOf('POST /payments/callback')).toEqual(
    expect.arrayContaining([
      'POST /payments/callback',
      'SignalWorkflow:paid',
      'HandleSignal:paid',
      'RunActivity:settlePayment',
    ]),
  );
  // ... and the order's request reaches the workflow and the activity that places the order.
  expect(traceOf('POST /orders')).toEqual(expect.arrayContaining(['POST /orders', 'RunActivity:placeOrder']));
});
