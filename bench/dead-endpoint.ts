import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { stockCatalog } from '../dev/chaos/catalog.js';
import { ChaosClient } from '../dev/chaos/client.js';
import { CHAOS_SECRETS, startChaosStack } from '../dev/chaos/stack.js';
import { ORDER_EVENT_TYPES } from '../domain/order-events.js';
import { summarize } from './stats.js';

/**
 * `npx tsx bench/dead-endpoint.ts [--rate N] [--segment S]`: does a dead webhook endpoint move
 * checkout? Open-loop checkout (POST /orders, a third paid through the payment webhook) in four
 * segments on one local stack: no endpoint, then an endpoint subscribed to every event whose host
 * accepts the connection and never answers (each send waits out WEBHOOK_TIMEOUT while its backlog
 * grows), then that endpoint deleted; then a healthy endpoint (it answers at once), to tell what a
 * dead endpoint costs from what any endpoint's deliveries cost on the same machine.
 */
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const RATE = option('--rate', 5);
const SEGMENT_S = option('--segment', 45);
const PAY_SHARE = 1 / 3;
/** The blackhole's connections, ended at exit. */
const held = new Set<Socket>();

interface Segment {
  name: string;
  placeMs: number[];
  payMs: number[];
  failed: number;
}

const blackhole = await hangingServer();
const answering = createHttpServer((_req, res) => res.writeHead(204).end());
await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
const stack = await startChaosStack({
  paymentWindow: '30s',
  cluster: false,
  serviceEnv: { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', FAULTS_ENABLED: 'false' },
});
try {
  const api = new ChaosClient(stack.apiUrl, CHAOS_SECRETS, 30_000);
  const catalog = await stockCatalog(api, 0);
  // Uncounted: the first orders warm the worker's and the API's code paths and Temporal's caches.
  await checkout('warm-up (not counted)', api, catalog.skus, 15);
  const segments: Segment[] = [];
  segments.push(await checkout('no endpoint', api, catalog.skus));
  const dead = await addEndpoint(api, `http://127.0.0.1:${(blackhole.address() as { port: number }).port}/events`);
  segments.push(await checkout('a dead endpoint hearing every event', api, catalog.skus));
  const backlog = await pendingFor(api, dead);
  await api.admin('DELETE', `/webhook-endpoints/${dead}`);
  segments.push(await checkout('the endpoint deleted', api, catalog.skus));
  // The same deliveries to a receiver that answers at once: what an endpoint costs, dead or not.
  const healthy = await addEndpoint(api, `http://127.0.0.1:${(answering.address() as { port: number }).port}/events`);
  segments.push(await checkout('a healthy endpoint hearing every event', api, catalog.skus));
  await api.admin('DELETE', `/webhook-endpoints/${healthy}`);

  console.log(`\nCheckout at ${RATE}/s for ${SEGMENT_S} s per segment, ${Math.round(PAY_SHARE * 100)} % paid:\n`);
  console.log('| segment | orders | POST /orders p50 / p99 | payment webhook p50 / p99 | failed |');
  console.log('|---|---|---|---|---|');
  for (const s of segments) {
    const place = summarize(s.placeMs);
    const pay = summarize(s.payMs);
    console.log(
      `| ${s.name} | ${s.placeMs.length} | ${ms(place.p50)} / ${ms(place.p99)} | ${ms(pay.p50)} / ${ms(pay.p99)} | ${s.failed} |`,
    );
  }
  const p99 = (s: Segment) => summarize(s.placeMs).p99 ?? NaN;
  const around = (p99(segments[0]!) + p99(segments[2]!)) / 2;
  console.log(
    `\nPOST /orders p99 with the dead endpoint ÷ the mean of the segments around it: ${(p99(segments[1]!) / around).toFixed(2)}×; with the healthy one: ${(p99(segments[3]!) / around).toFixed(2)}×; deliveries pending for the dead one when it was deleted: ${backlog}${backlog === 200 ? ' or more' : ''}`,
  );
} finally {
  await stack.stop();
  blackhole.close();
  answering.close();
  for (const socket of held) socket.destroy();
}

async function addEndpoint(api: ChaosClient, url: string): Promise<string> {
  const created = await api.admin('POST', '/webhook-endpoints', { url, eventTypes: [...ORDER_EVENT_TYPES] });
  if (created.status !== 201) throw new Error(`POST /webhook-endpoints answered ${created.status}`);
  return (created.body as { endpoint: { id: string } }).endpoint.id;
}

async function pendingFor(api: ChaosClient, endpointId: string): Promise<number> {
  const pending = await api.admin('GET', `/webhook-deliveries?status=PENDING&endpointId=${endpointId}&limit=200`);
  return (pending.body as { deliveries: unknown[] }).deliveries.length;
}

/** Open loop: an order every 1/RATE s whatever the answers, a third of them paid at once. */
async function checkout(name: string, api: ChaosClient, skus: string[], seconds = SEGMENT_S): Promise<Segment> {
  console.log(`segment: ${name} …`);
  const segment: Segment = { name, placeMs: [], payMs: [], failed: 0 };
  const calls: Promise<void>[] = [];
  const total = Math.round(RATE * seconds);
  const started = performance.now();
  for (let n = 0; n < total; n++) {
    await sleep(Math.max(0, started + (n * 1000) / RATE - performance.now()));
    calls.push(placeAndMaybePay(api, skus, n, segment));
  }
  await Promise.all(calls);
  return segment;
}

async function placeAndMaybePay(api: ChaosClient, skus: string[], n: number, segment: Segment): Promise<void> {
  const customerId = `dead-endpoint-${n % 50}`;
  const body = { customerId, items: [{ sku: skus[n % 4]!, quantity: 1 }] };
  const placed = await api.asCustomer(customerId, 'POST', '/orders', { json: body });
  if (placed.status !== 201) {
    segment.failed++;
    return;
  }
  segment.placeMs.push(placed.ms);
  if (n % Math.round(1 / PAY_SHARE) !== 0) return;
  const order = placed.body as { id: string; totalCents: number };
  const paid = await api.pay({
    paymentId: `dead-endpoint-pay-${order.id}`,
    orderId: order.id,
    amountCents: order.totalCents,
  });
  if (paid.status === 202) segment.payMs.push(paid.ms);
  else segment.failed++;
}

/** A host that takes every connection and never answers: what a hung receiver looks like to a sender. */
async function hangingServer(): Promise<Server> {
  const server = createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function ms(v: number | null): string {
  return v === null ? '–' : `${Math.round(v)} ms`;
}
