import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createDb, type Db } from '../../lib/db.js';
import { query } from '../../lib/sql.js';
import { Prisma } from '@prisma/client';
import { stockCatalog, type ChaosCatalog } from '../../dev/chaos/catalog.js';
import { ChaosClient } from '../../dev/chaos/client.js';
import { CHAOS_SECRETS, startChaosStack } from '../../dev/chaos/stack.js';
import { chargeFakePayment } from '../../dev/fakes/payment-provider.js';
import { findFreePort } from '../../dev/ports.js';
import { FLOOR_TASK_QUEUE } from '../floor/messages.js';
import { startMinimalTimer } from '../floor/runs.js';
import { billableActions, historySize, noActions, type Actions } from './actions.js';

/**
 * The history-based count held against Temporal Server's own `action` counter (its frontend's
 * telemetry interceptor, labelled by `action_type`): each path's orders run on a real Server 1.32
 * with the production-like provider that cancels payments, the counter is read before and after, and
 * the runs' histories are counted by `billableActions`. The counter also sees what no history shows
 * (the API's priority change after placement, queries); those are given apart.
 */

/** How the server's action types map to the history's kinds; the rest is reported as "not in the history". */
const SERVER_KIND: Record<string, keyof Omit<Actions, 'total'>> = {
  grpc_ExecuteMultiOperation: 'start',
  grpc_StartWorkflowExecution: 'start',
  command_ContinueAsNewWorkflowExecution: 'start',
  // Prometheus spells the server's `message_UpdateWorkflowExecution:Acceptance` with an underscore.
  message_UpdateWorkflowExecution_Acceptance: 'update',
  grpc_SignalWorkflowExecution: 'signal',
  grpc_SignalWithStartWorkflowExecution: 'signal',
  command_StartTimer: 'timer',
  command_UpsertWorkflowSearchAttributes: 'upsert',
  command_ScheduleActivityTask: 'activityAttempts',
  activity_retry: 'activityAttempts',
  command_BatchMarkers: 'localActivityTasks',
};
/** One per marker; the batch (one per workflow task) is what is billed. */
const PER_MARKER = 'command_RecordMarker';

type Counter = Map<string, number>;

export interface ServerCheckRow {
  path: string;
  orders: number;
  /** Per order, from the runs' histories. */
  history: Actions;
  /** Per order, the server's counter mapped to the same kinds. */
  server: Actions;
  /** Per order, the histories' events and bytes (every run of it). */
  events: number;
  bytes: number;
  /**
   * Per order, the statements the service (worker, API, its job queue) sent PostgreSQL, BEGIN and
   * COMMIT included: each is one round trip on \`pg\`. The local fakes' statements on their own
   * schema are left out (they stand in for third parties), but not their transactions' BEGIN/COMMIT;
   * so is the service's background (job-queue polls, gauges) at its idle rate over the path's time.
   */
  statements: number;
  /** Per order, action types the server counted that no history shows, by type. */
  notInHistory: Record<string, number>;
}

const ORDERS_PER_PATH = 6;
/** The worker's and the API's own login, so that pg_stat_statements tells their statements apart. */
const SERVICE_ROLE = 'cost_service';
const PAYMENT_WINDOW = '6s';

export async function checkAgainstServer(log: (line: string) => void): Promise<ServerCheckRow[]> {
  const metricsPort = await findFreePort();
  const stack = await startChaosStack({
    paymentWindow: PAYMENT_WINDOW,
    cluster: false,
    payments: 'cancellable',
    // No schedule fires during the check: its runs would be counted too.
    serviceEnv: { RECONCILE_EVERY: '1h', PROVIDER_SWEEP_EVERY: '1h', FAULTS_ENABLED: 'false' },
    temporalEnv: { METRICS_PORT: String(metricsPort) },
    countStatementsAs: SERVICE_ROLE,
  });
  const db = createDb(stack.databaseUrl, { maxConnections: 3 });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const parts: Parts = {
      backgroundStatementsPerS: 0,
      api: new ChaosClient(stack.apiUrl, CHAOS_SECRETS),
      db,
      temporal: new Client({ connection }),
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    };
    const catalog = await stockCatalog(parts.api, 0);
    // Once, uncounted: the first orders also set off the server's own runs for the worker's
    // deployment and schedules, whose actions land in the same counter.
    log('cost: a first path, not counted …');
    await measurePath(parts, catalog, PATHS[0]!);
    parts.backgroundStatementsPerS = await backgroundStatements(parts.db);
    log(
      `cost: the service sends ${parts.backgroundStatementsPerS.toFixed(2)} statements a second with no order under way`,
    );
    const rows: ServerCheckRow[] = [];
    for (const path of PATHS) {
      log(`cost: ${ORDERS_PER_PATH} orders, ${path.name} …`);
      rows.push(await measurePath(parts, catalog, path));
    }
    log(`cost: ${ORDERS_PER_PATH} runs of Temporal's floor …`);
    rows.push(await measureFloor(parts, stack.temporalAddress));
    return rows;
  } finally {
    await connection.close();
    await db.$disconnect();
    await stack.stop();
  }
}

interface Parts {
  /** What the service sends PostgreSQL with no order under way (its job queue's polls, its gauges). */
  backgroundStatementsPerS: number;
  api: ChaosClient;
  db: Db;
  temporal: Client;
  metricsUrl: string;
}

interface PathPlan {
  name: string;
  /** What the customer does once the order is placed. */
  play(parts: Parts, order: { id: string; totalCents: number; customerId: string }): Promise<void>;
  /** The order's status when its run is done. */
  ends: string;
}

const PATHS: PathPlan[] = [
  { name: 'an order that expires', ends: 'CANCELLED', play: async () => {} },
  {
    name: 'one paid and fulfilled',
    ends: 'PAID',
    play: async ({ api, db }, order) => {
      const charge = await chargeFakePayment(db, { orderId: order.id, amountCents: order.totalCents });
      if (charge.outcome !== 'SUCCEEDED') throw new Error(`the provider refused to charge ${order.id}`);
      const paid = await api.pay({
        paymentId: charge.payment.paymentId,
        orderId: order.id,
        amountCents: order.totalCents,
      });
      if (paid.status !== 202) throw new Error(`POST /payments/callback answered ${paid.status}`);
    },
  },
  {
    name: "a customer's cancel",
    ends: 'CANCELLED',
    play: async ({ api }, order) => {
      const answer = await api.asCustomer(order.customerId, 'POST', `/orders/${order.id}/cancel`);
      if (answer.status >= 300) throw new Error(`POST /orders/:id/cancel answered ${answer.status}`);
    },
  },
];

async function measurePath(parts: Parts, catalog: ChaosCatalog, path: PathPlan): Promise<ServerCheckRow> {
  return measure(parts, path.name, async () => {
    const orders = [];
    for (let n = 0; n < ORDERS_PER_PATH; n++) {
      const customerId = `cost-${n}`;
      const body = { customerId, items: [{ sku: catalog.skus[n % 4]!, quantity: 1 }] };
      const placed = await parts.api.asCustomer(customerId, 'POST', '/orders', { json: body });
      if (placed.status !== 201)
        throw new Error(`POST /orders answered ${placed.status}: ${JSON.stringify(placed.body)}`);
      orders.push({ ...(placed.body as { id: string; totalCents: number }), customerId });
    }
    for (const order of orders) await path.play(parts, order);
    return untilRunsClosed(
      parts,
      orders.map((o) => o.id),
      path.ends,
    );
  });
}

/**
 * Temporal's floor (bench/floor/): update-with-start, one durable timer, complete. Its worker runs
 * here, in this process: only its commands matter, not its CPU.
 */
async function measureFloor(parts: Parts, address: string): Promise<ServerCheckRow> {
  const connection = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({
      connection,
      taskQueue: FLOOR_TASK_QUEUE,
      workflowsPath: fileURLToPath(new URL('../floor/workflows.ts', import.meta.url)),
    });
    return await worker.runUntil(
      measure(parts, "Temporal's floor (update-with-start, a timer, complete)", async () => {
        const ids = Array.from({ length: ORDERS_PER_PATH }, (_, n) => `cost-floor-${Date.now()}-${n}`);
        for (const id of ids) await startMinimalTimer(parts.temporal, id, Date.now() + 2_000);
        for (const id of ids) await parts.temporal.workflow.getHandle(id).result();
        return ids;
      }),
    );
  } finally {
    await connection.close();
  }
}

/** Runs `drive` (which answers the workflow ids it ran, all closed) between two quiet reads of the counter. */
async function measure(parts: Parts, name: string, drive: () => Promise<string[]>): Promise<ServerCheckRow> {
  const before = await quietActions(parts.metricsUrl);
  const statementsBefore = await serviceStatements(parts.db);
  const startedAt = performance.now();
  const workflowIds = await drive();
  const after = await quietActions(parts.metricsUrl);
  const elapsedS = (performance.now() - startedAt) / 1000;
  const statements = (await serviceStatements(parts.db)) - statementsBefore - parts.backgroundStatementsPerS * elapsedS;

  const history = noActions();
  const size = { events: 0, bytes: 0 };
  for (const workflowId of workflowIds) {
    for await (const run of runsOf(parts.temporal, workflowId)) {
      add(history, billableActions(run));
      const { events, bytes } = historySize(run);
      size.events += events;
      size.bytes += bytes;
    }
  }
  const server = noActions();
  const notInHistory: Record<string, number> = {};
  for (const [type, count] of after) {
    const delta = count - (before.get(type) ?? 0);
    if (delta === 0 || type === PER_MARKER) continue;
    const kind = SERVER_KIND[type];
    if (kind === undefined) notInHistory[type] = delta / workflowIds.length;
    else server[kind] += delta;
  }
  return {
    path: name,
    orders: workflowIds.length,
    history: perOrder(history, workflowIds.length),
    server: perOrder(server, workflowIds.length),
    events: size.events / workflowIds.length,
    bytes: Math.round(size.bytes / workflowIds.length),
    statements: statements / workflowIds.length,
    notInHistory,
  };
}

/** Waits until every order has its final status and its workflow (each run, if it continued as new) is closed. */
async function untilRunsClosed(parts: Parts, orderIds: string[], status: string): Promise<string[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await query<{ n: number }>(
      parts.db.pool,
      Prisma.sql`SELECT count(*)::int AS n FROM orders WHERE id = ANY(${orderIds}::uuid[]) AND status::text = ${status}`,
    );
    if (rows[0]!.n === orderIds.length) {
      const described = await Promise.all(
        orderIds.map((id) => parts.temporal.workflow.getHandle(`order-${id}`).describe()),
      );
      if (described.every((d) => d.status.name !== 'RUNNING')) return described.map((d) => d.workflowId);
    }
    if (Date.now() > deadline)
      throw new Error(`the orders did not all reach ${status} with their runs closed in 120 s`);
    await sleep(500);
  }
}

const BACKGROUND_S = 20;

async function backgroundStatements(db: Db): Promise<number> {
  const before = await serviceStatements(db);
  await sleep(BACKGROUND_S * 1000);
  return ((await serviceStatements(db)) - before) / BACKGROUND_S;
}

/** What the service's role has executed so far (pg_stat_statements), the local fakes' own statements left out. */
async function serviceStatements(db: Db): Promise<number> {
  const { rows } = await query<{ calls: string | null }>(
    db.pool,
    Prisma.sql`
      SELECT sum(s.calls) AS calls FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
      WHERE r.rolname = ${SERVICE_ROLE} AND s.query NOT LIKE '%fakes.%'
        AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return Number(rows[0]?.calls ?? 0);
}

/** Every run of a workflow id, oldest first, following continue-as-new. */
async function* runsOf(temporal: Client, workflowId: string) {
  const runs = [];
  for await (const execution of temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(execution);
  for (const run of runs) yield await temporal.workflow.getHandle(workflowId, run.runId).fetchHistory();
}

/**
 * The counter once it has not moved for 3 s: the worker's start (its schedules, their scheduler
 * runs) and the last completions of a path are in it, and nothing else is under way.
 */
async function quietActions(metricsUrl: string): Promise<Counter> {
  const deadline = Date.now() + 60_000;
  let last = await readActions(metricsUrl);
  for (;;) {
    await sleep(3_000);
    const now = await readActions(metricsUrl);
    if (sameCounts(last, now)) return now;
    if (Date.now() > deadline) throw new Error("Temporal Server's action counter did not settle in 60 s");
    last = now;
  }
}

function sameCounts(a: Counter, b: Counter): boolean {
  return a.size === b.size && [...a].every(([type, n]) => b.get(type) === n);
}

/** The frontend's `action` counter by its `action_type`, summed over its other labels. */
async function readActions(metricsUrl: string): Promise<Counter> {
  const text = await (await fetch(metricsUrl)).text();
  const counter: Counter = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('action{')) continue;
    const type = /action_type="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (type !== undefined && Number.isFinite(value)) counter.set(type, (counter.get(type) ?? 0) + value);
  }
  return counter;
}

function add(into: Actions, more: Actions): void {
  for (const key of Object.keys(into) as (keyof Actions)[]) into[key] += more[key];
}

function perOrder(actions: Actions, orders: number): Actions {
  const total = Object.entries(actions)
    .filter(([key]) => key !== 'total')
    .reduce((sum, [, v]) => sum + v, 0);
  const out = { ...actions, total };
  for (const key of Object.keys(out) as (keyof Actions)[]) out[key] = out[key] / orders;
  return out;
}
