import { loadConfig } from '../lib/config/index.js';
import type { CeilingLevel } from './ceiling.js';
import { ACTION_KINDS } from './cost/actions.js';
import { heldCost } from './cost/paths.js';
import type { BenchResults } from './results.js';
import { BENCH_TEMPORALS, type BenchOptions } from './options.js';
import { SERVICE_COMPONENTS, serviceCpuS, type ResourceUse } from './resources.js';
import { ROLES } from './stack.js';
import { bytes, ms, num, pct, x } from './format.js';
import { ratio } from './stats.js';
import type { ProbeResult } from './storm-probes.js';
import { targetsSection } from './report-targets.js';
import type { SustainedResult } from './sustained.js';
import type { StormResult } from './storm.js';
import { coldCacheRatio, earlyCancellations, RATE_CONDITIONS_TEXT, sustainedOpenRuns } from './targets.js';

export function markdownReport(r: BenchResults): string {
  const { timer, scan } = r.sustained;
  const st = r.storm;
  const best = bestCeiling(r);
  const o = r.options;
  const rate = r.sideBySideRate;
  const timerStatementsPerOrder = (timer.statements[ROLES.service]?.calls ?? 0) / timer.creation.completed;
  const scanCreationPerOrder = (scan.statements[ROLES.seed]?.calls ?? 0) / scan.creation.completed;
  const scanCancelPerOrder = (scan.statements[ROLES.scan]?.calls ?? 0) / Math.max(1, scan.lagsMs.length);
  const lines = [
    `# order-lifecycle benchmark${o.quick ? ' (--quick)' : ''}`,
    '',
    `${r.startedAt} → ${r.finishedAt}; ${r.machine.cores} cores, ${r.machine.memGiB} GiB; load average before ${r.machine.loadBefore}, after ${r.machine.loadAfter}.`,
    `Stack: embedded PostgreSQL 18 (durable, pg_stat_statements), ${BENCH_TEMPORALS[o.temporal]}${o.temporal === 'cli' ? ` with ${o.untunedTemporal ? 'the CLI defaults (--untuned-temporal)' : 'DEV_SERVER_TUNING'}` : ''}, ${o.workers} worker process${o.workers === 1 ? '' : 'es'} (\`--workers\`) and the API as child processes, DATABASE_POOL_SIZE ${servicePoolSize(o)} per process.`,
    `Workload: a ramp of the timer path up to ${o.rate} orders/s (${o.rampStepS} s per step), then ${rate} orders/s (the highest step within the rate target's p99s) offered for ${o.durationS} s per path, payment window ${o.windowS} s, ${Math.round(o.payShare * 100)} % of the timer path's orders paid; storm of ${o.storm}; scan canceller every ${o.scanEveryS} s, batches of ${o.scanBatch}.`,
    o.serviceEnv && Object.keys(o.serviceEnv).length
      ? `Service environment overrides: ${Object.entries(o.serviceEnv)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`
      : 'Service settings: the defaults.',
    '',
    ...targetsSection(r),
    '',
    '## Ramp: the highest rate the durable-timer path sustains',
    '',
    `Each step offers its rate through POST /orders for its own orders for ${o.rampStepS} s (its orders expire ${o.windowS} s after placement, so ${o.rampStepS > o.windowS ? `its last ${o.rampStepS - o.windowS} s carry placements and expiries together` : 'it measures placements without its expiries'}); it holds when every order is created and both POST /orders and the cancel lag keep their p99 within 2 s (the load is open-loop: beyond capacity, a backlog grows for as long as the step lasts). The ramp stops at the first step that does not hold, or at the first step at or above the target rate past ${RATE_CONDITIONS_TEXT}: the rate target is then judged on the steps below. CPU is per order started, over the step and its settling.`,
    '',
    '| offered / s | achieved / s | held | POST /orders p50 / p99 | cancel lag p50 / p95 / p99 / max | early | CPU ms per order: postgres / temporal / worker / API |',
    '|---|---|---|---|---|---|---|',
    ...r.ramp.steps.map(
      (st) =>
        `| ${st.rate} | ${num(st.achievedRate)} | ${st.held ? 'yes' : `no: ${st.why}`} | ${ms(st.creationMs.p50)} / ${ms(st.creationMs.p99)} | ${pct(st.lagMs)} | ${st.negative} | ${(['postgres', 'temporal', 'worker', 'api'] as const).map((c) => num(st.cpuMsPerOrder[c] ?? null, 0)).join(' / ')} |`,
    ),
    '',
    `Highest step held: ${r.ramp.maxSustained ?? 'none'}${r.ramp.maxSustained === null ? '' : ' orders/s'}; the side-by-side phases run at ${rate}/s, the highest step with ${RATE_CONDITIONS_TEXT} (else the highest held). Early cancellations over every phase of the timer path (ramp, sustained cold and warm, storms, crash storm): ${earlyCancellations(r)}.`,
    '',
    `## Sustained load at ${rate} orders/s, side by side`,
    '',
    `| | durable timer | scan every ${o.scanEveryS} s | scan / timer |`,
    '|---|---|---|---|',
    `| orders created (offered ${rate}/s) | ${timer.creation.completed} at ${num(timer.creation.achievedRate)}/s, ${timer.creation.failed} failed | ${scan.creation.completed} at ${num(scan.creation.achievedRate)}/s, ${scan.creation.failed} failed | |`,
    `| creation latency p50 / p99 | ${ms(timer.creation.latencyMs.p50)} / ${ms(timer.creation.latencyMs.p99)} (POST /orders) | ${ms(scan.creation.latencyMs.p50)} / ${ms(scan.creation.latencyMs.p99)} (placeOrder in-process, no HTTP) | |`,
    `| cancel lag p50 / p95 / p99 / max | ${pct(timer.cancel.lagMs)} | ${pct(scan.cancel.lagMs)} | p99 ${x(ratio(scan.cancel.lagMs.p99, timer.cancel.lagMs.p99))} |`,
    `| early cancellations (negative lag) | ${timer.cancel.negative} | ${scan.cancel.negative} | |`,
    `| compensated (notice sent) p99 after deadline | ${ms(timer.cancel.compensatedLagMs.p99)} | ${ms(scan.cancel.compensatedLagMs.p99)} | ${x(ratio(scan.cancel.compensatedLagMs.p99, timer.cancel.compensatedLagMs.p99))} |`,
    `| cancelled / left unpaid past deadline | ${timer.cancel.lagMs.count} / ${timer.cancel.stillUnpaidPastDeadline} | ${scan.cancel.lagMs.count} / ${scan.cancel.stillUnpaidPastDeadline} | |`,
    `| DB statements per order (all work of the path) | ${num(timerStatementsPerOrder)} (placement, payment, fulfillment, cancel) | ${num(scanCreationPerOrder + (scanCancelPerOrder * scan.lagsMs.length) / scan.creation.completed)} (placement ${num(scanCreationPerOrder)} + canceller ${num(scanCancelPerOrder)} per cancelled) | |`,
    `| CPU s: postgres / temporal / worker / API / bench | ${cpu(timer.resources)} | ${cpu(scan.resources)} | |`,
    `| store growth per order created: Temporal (${r.options.temporal === 'postgres' ? 'databases temporal + temporal_visibility' : 'SQLite file + -wal'}) / service tables | ${growth(timer)} | ${growth(scan)} | |`,
    `| peak RSS MB: postgres / temporal / worker / API / bench | ${rss(timer.resources)} | ${rss(scan.resources)} | |`,
    `| CPU used by other people's processes meanwhile | ${num(timer.resources.othersCpuS)} s of ${num(timer.resources.wallS)} s wall | ${num(scan.resources.othersCpuS)} s of ${num(scan.resources.wallS)} s wall | |`,
    '',
    `Webhook → PAID (timer path, ${timer.payment?.webhookToPaidMs.count ?? 0} payments): 202 answered in p50 ${ms(timer.payment?.webhookResponseMs.p50)} / p99 ${ms(timer.payment?.webhookResponseMs.p99)}; order PAID (paid_at − send) p50 ${ms(timer.payment?.webhookToPaidMs.p50)} / p95 ${ms(timer.payment?.webhookToPaidMs.p95)} / p99 ${ms(timer.payment?.webhookToPaidMs.p99)}; not paid: ${timer.payment?.notPaid ?? 0}.`,
    scan.scanner
      ? `Scan canceller: ${scan.scanner.ticks} scans, ${scan.scanner.batches} batches, busy ${num(scan.scanner.busyMs / 1000)} s.`
      : '',
    `Store growth: bytes on disk once the phase settled minus before it, per order created (timer: ${bytes(timer.storeGrowth.after.temporal - timer.storeGrowth.before.temporal)} of Temporal's store and ${bytes(timer.storeGrowth.after.service - timer.storeGrowth.before.service)} of service tables for ${timer.creation.completed} orders); the service tables are schema public with indexes, without the local fakes' schema. Allocation is by pages, so a short phase rounds.`,
    '',
    `## Cancellation storm: ${o.storm} orders expiring in the same second`,
    '',
    `| | durable timer | scan every ${o.scanEveryS} s | scan / timer |`,
    '|---|---|---|---|',
    `| all cancelled and compensated after | ${num(st.timer.allCompensatedS)} s | ${num(st.scan.allCompensatedS)} s | ${x(ratio(st.scan.allCompensatedS, st.timer.allCompensatedS))} |`,
    `| throughput (orders/s) | ${num(st.timer.throughput)} | ${num(st.scan.throughput)} | |`,
    `| cancel lag p50 / p95 / p99 / max | ${pct(st.timer.lagMs)} | ${pct(st.scan.lagMs)} | |`,
    `| early cancellations | ${st.timer.negative} | ${st.scan.negative} | |`,
    `| peak DB connections (total / active) | ${st.timer.peakConnections.peakTotal} / ${st.timer.peakConnections.peakActive} | ${st.scan.peakConnections.peakTotal} / ${st.scan.peakConnections.peakActive} | |`,
    `| POST /orders probes meanwhile: sent (per s), p50 / p99, failed or unanswered | ${probePlaced(st.timer.probes)} | ${probePlaced(st.scan.probes)} | |`,
    `| their webhooks meanwhile: 202 p50 / p99, failed or unanswered | ${probePaid(st.timer.probes)} | ${probePaid(st.scan.probes)} | |`,
    `| DB statements per cancelled order | ${num(st.timer.statementsPerCancel)} | ${num(st.scan.statementsPerCancel)} | ${x(ratio(st.scan.statementsPerCancel, st.timer.statementsPerCancel))} |`,
    `| CPU s: postgres / temporal / worker / API / bench | ${cpu(st.timer.resources)} | ${cpu(st.scan.resources)} | |`,
    '',
    `Statements are pg_stat_statements calls (BEGIN/COMMIT included). Timer: ${st.timer.statementsNote}. Scan: ${st.scan.statementsNote}. Timer storm workflows not yet waiting on their timer 2 s before the deadline: ${st.timer.notWaitingAtDeadline}.`,
    '',
    stormLoadOnPostgres(r),
    '',
    ...cacheSection(r),
    '',
    "## The machine's limit: the guarded cancel alone",
    '',
    "| connections | guarded updates/s | CPU s postgres / bench | others' CPU s |",
    '|---|---|---|---|',
    ...r.ceiling.map(
      (c) =>
        `| ${c.connections} | ${Math.round(c.updatesPerS)} | ${num(c.resources.cpuS.postgres)} / ${num(c.resources.cpuS.bench)} | ${num(c.resources.othersCpuS)} |`,
    ),
    '',
    `Best: ${Math.round(best.updatesPerS)}/s with ${best.connections} connections. The storm's end-to-end cancellation rate (timer path, ${num(st.timer.throughput)}/s) is ${num(100 * (ratio(st.timer.throughput, best.updatesPerS) ?? 0))} % of it; one cancellation costs ${num(st.timer.statementsPerCancel)} statements instead of 1, and the CPU split above shows who spends the rest.`,
    '',
    ...clientCost(r, timerStatementsPerOrder),
    '',
    '## CPU split during the timer storm',
    '',
    split(st.timer.resources),
    '',
    ...costSection(r, timerStatementsPerOrder),
    '',
    ...temporalCostSection(r),
    '',
    `## Top statements of the timer storm (role ${ROLES.service})`,
    '',
    ...st.timer.topStatements.map((s) => `- ${s.calls} × \`${s.query.replace(/`/g, "'")}\``),
    '',
    `## Top statements of the scan storm (role ${ROLES.scan})`,
    '',
    ...st.scan.topStatements.map((s) => `- ${s.calls} × \`${s.query.replace(/`/g, "'")}\``),
  ];
  return lines.join('\n') + '\n';
}

/**
 * What an order and a storm cancellation cost, per service process, from this run: the inputs a
 * capacity plan needs (CPU, statements, bytes per order), and the rate the machine's cores allow.
 */
function costSection(r: BenchResults, statementsPerOrder: number): string[] {
  const t = r.sustained.timer;
  const orders = Math.max(1, t.creation.completed);
  const st = r.storm.timer;
  const perOrder = (c: string) => (1000 * (t.resources.cpuS[c] ?? 0)) / orders;
  const total = (serviceCpuS(t.resources) * 1000) / orders;
  const cancelTotal = cancelCpu(st);
  const probeMs = st.probeCost ? SERVICE_COMPONENTS.reduce((a, c) => a + (st.probeCost!.cpuMs[c] ?? 0), 0) : null;
  const cores = (u: ResourceUse, c: string) => num((u.cpuS[c] ?? 0) / u.wallS, 2);
  return [
    '## What an order costs',
    '',
    `| | ${SERVICE_COMPONENTS.join(' | ')} | service | bench (load generator) |`,
    '|---|---|---|---|---|---|---|',
    `| CPU ms per order: timer path at ${r.sideBySideRate}/s for ${r.options.durationS} s, settling included | ${SERVICE_COMPONENTS.map((c) => num(perOrder(c), 1)).join(' | ')} | ${num(total, 1)} | ${num(perOrder('bench'), 1)} |`,
    `| cores while those orders were offered | ${SERVICE_COMPONENTS.map((c) => cores(t.underLoad, c)).join(' | ')} | ${num(serviceCpuS(t.underLoad) / t.underLoad.wallS, 2)} | ${cores(t.underLoad, 'bench')} |`,
    `| CPU ms per storm cancellation with its compensation (probes taken out) | ${SERVICE_COMPONENTS.map((c) => num(st.cpuMsPerCancel?.[c], 1)).join(' | ')} | ${num(cancelTotal, 1)} | |`,
    '',
    `- ${r.machine.cores} cores allow at most about ${num((r.machine.cores * 1000) / total, 0)} orders/s at ${num(total, 0)} ms per order, whatever the pool sizes and concurrency limits; ${r.options.workers} worker process${r.options.workers === 1 ? '' : 'es'} ("worker" adds them up). PostgreSQL's own limit is far off: the guarded cancel alone runs at ${Math.round(bestCeiling(r).updatesPerS)}/s.`,
    `- Per order: ${num(statementsPerOrder, 1)} statements of the service (role ${ROLES.service}); Temporal's store grows ${bytes(t.storeGrowth.temporalPerOrder)} (${BENCH_TEMPORALS[r.options.temporal]}), the service's tables ${bytes(t.storeGrowth.servicePerOrder)}.`,
    `- A storm cancellation: ${num(st.statementsPerCancel)} statements; the ${st.probes.sent} probes placed and paid meanwhile were taken out at ${num(probeMs, 0)} ms and ${num(st.probeCost?.statements)} statements each, measured just before the storm.`,
  ];
}

/** Each path of one order on Temporal, from its recorded history (`npm run cost`): the same on every machine. */
function temporalCostSection(r: BenchResults): string[] {
  return [
    '## What an order costs on Temporal (recorded histories)',
    '',
    `Billable actions by Temporal Cloud's published rules, and the history a self-hosted cluster writes and keeps; \`npm run cost -- --server\` holds the count against the server's own \`action\` metric.`,
    '',
    `| path | actions | ${ACTION_KINDS.join(' | ')} | events | bytes | actions an hour |`,
    `|---|---|${ACTION_KINDS.map(() => '---').join('|')}|---|---|---|`,
    ...r.cost.map(
      (c) =>
        `| ${c.path} | ${c.actions.total} | ${ACTION_KINDS.map((k) => c.actions[k]).join(' | ')} | ${c.events} | ${c.bytes.toLocaleString('en')} | ${heldCost(c)} |`,
    ),
  ];
}

/** The connection count at which the guarded cancel alone ran fastest. */
function bestCeiling(r: BenchResults): CeilingLevel {
  return r.ceiling.reduce((a, b) => (b.updatesPerS > a.updatesPerS ? b : a), r.ceiling[0]!);
}

/** The pool the bench's worker and API run with: the service's own default unless `--env` overrides it. */
function servicePoolSize(o: BenchOptions): number {
  return loadConfig({ DATABASE_POOL_SIZE: o.serviceEnv.DATABASE_POOL_SIZE }).databasePoolSize;
}

/** What the timer storm asked of PostgreSQL, against what PostgreSQL can do, and what bounded it. */
function stormLoadOnPostgres(r: BenchResults): string {
  const st = r.storm.timer;
  const perS =
    st.statementsPerCancel !== null && st.throughput !== null ? st.statementsPerCancel * st.throughput : null;
  const best = bestCeiling(r).updatesPerS;
  return `What kept PostgreSQL safe in the timer storm: at most ${st.peakConnections.peakTotal} connections (${st.peakConnections.peakActive} active), because each process opens at most DATABASE_POOL_SIZE (${servicePoolSize(r.options)}) whatever the worker's activity slots; and about ${num(perS, 0)} statements/s (${num(100 * (ratio(perS, best) ?? 0))} % of the guarded-update ceiling below), because due timers become workflow tasks handed out as worker slots free up, not a burst of queries.`;
}

/** Prisma vs pg for the same statement, and what the difference is worth per order of the service. */
function clientCost(r: BenchResults, statementsPerOrder: number): string[] {
  const pgCost = r.clients.find((c) => c.client === 'pg');
  const prisma = r.clients.find((c) => c.client !== 'pg');
  if (!pgCost || !prisma) return [];
  const savedMs = ((prisma.cpuUsPerStatement - pgCost.cpuUsPerStatement) * statementsPerOrder) / 1000;
  const worker = r.ramp.steps.filter((st) => st.held).at(-1)?.cpuMsPerOrder.worker ?? null;
  return [
    '| client, 1 connection | guarded updates/s | client CPU per statement |',
    '|---|---|---|',
    ...r.clients.map((c) => `| ${c.client} | ${Math.round(c.updatesPerS)} | ${Math.round(c.cpuUsPerStatement)} µs |`),
    '',
    `Prisma vs pg for the service's own statements: the activities send about ${num(statementsPerOrder, 0)} statements per order, on pg (lib/sql.ts); through Prisma's client they would cost about ${num(savedMs)} ms more of CPU per order${worker === null ? '' : ` than the worker's ${num(worker, 0)} ms`}.`,
  ];
}

function growth(p: SustainedResult): string {
  return `${bytes(p.storeGrowth.temporalPerOrder)} / ${bytes(p.storeGrowth.servicePerOrder)}`;
}
function probePlaced(p: ProbeResult): string {
  return `${p.sent} (${num(p.offeredRate)}/s), ${ms(p.placeMs.p50)} / ${ms(p.placeMs.p99)}, ${p.placeFailed}`;
}
function probePaid(p: ProbeResult): string {
  return `${ms(p.webhookMs.p50)} / ${ms(p.webhookMs.p99)}, ${p.webhookFailed}`;
}

/**
 * The timer path on the cold cache every other phase runs on (the targets' figures) beside the
 * same sustained phase and storm on the SDK's default cache, where every run stays cached.
 */
function cacheSection(r: BenchResults): string[] {
  const cold = { sustained: r.sustained.timer, storm: r.storm.timer };
  const { warm } = r;
  const perOrder = (s: SustainedResult) => (1000 * serviceCpuS(s.resources)) / Math.max(1, s.creation.completed);
  const split = (s: SustainedResult) =>
    SERVICE_COMPONENTS.map((c) => num((1000 * (s.resources.cpuS[c] ?? 0)) / Math.max(1, s.creation.completed), 0)).join(
      ' / ',
    );
  return [
    `## The workflow cache: cold (${r.options.workerCache} runs, the targets' figures) and warm (the SDK's default)`,
    '',
    `Open runs per cached run in the cold phases: ${num(coldCacheRatio(r), 0)}× (at its peak, the sustained phase holds about ${num(sustainedOpenRuns(r), 0)} open runs, its paid orders' runs ending early, the storm ${r.options.storm}; ${r.options.workers} worker${r.options.workers === 1 ? '' : 's'} caching ${r.options.workerCache} each), as production's 30-minute window holds tens of thousands per worker. With a cold cache most timer firings and payments replay the run's history first.`,
    '',
    '| | cold | warm | cold / warm |',
    '|---|---|---|---|',
    `| sustained: CPU ms per order (postgres / temporal / worker / API) | ${num(perOrder(cold.sustained), 1)} (${split(cold.sustained)}) | ${num(perOrder(warm.sustained), 1)} (${split(warm.sustained)}) | ${x(ratio(perOrder(cold.sustained), perOrder(warm.sustained)))} |`,
    `| sustained: POST /orders p99 | ${ms(cold.sustained.creation.latencyMs.p99)} | ${ms(warm.sustained.creation.latencyMs.p99)} | |`,
    `| sustained: cancel lag p50 / p95 / p99 / max | ${pct(cold.sustained.cancel.lagMs)} | ${pct(warm.sustained.cancel.lagMs)} | |`,
    `| storm: all cancelled and compensated after | ${num(cold.storm.allCompensatedS)} s | ${num(warm.storm.allCompensatedS)} s | ${x(ratio(cold.storm.allCompensatedS, warm.storm.allCompensatedS))} |`,
    `| storm: CPU ms per cancellation (probes taken out) | ${num(cancelCpu(cold.storm), 1)} | ${num(cancelCpu(warm.storm), 1)} | ${x(ratio(cancelCpu(cold.storm), cancelCpu(warm.storm)))} |`,
    `| storm: POST /orders probes p99, failed; webhook 202 p99 | ${ms(cold.storm.probes.placeMs.p99)}, ${cold.storm.probes.placeFailed}; ${ms(cold.storm.probes.webhookMs.p99)} | ${ms(warm.storm.probes.placeMs.p99)}, ${warm.storm.probes.placeFailed}; ${ms(warm.storm.probes.webhookMs.p99)} | |`,
  ];
}

const cancelCpu = (st: StormResult) =>
  st.cpuMsPerCancel ? SERVICE_COMPONENTS.reduce((a, c) => a + st.cpuMsPerCancel![c], 0) : null;

const COMPONENTS = ['postgres', 'temporal', 'worker', 'api', 'bench'] as const;
function cpu(r: ResourceUse): string {
  return COMPONENTS.map((c) => num(r.cpuS[c])).join(' / ');
}
function rss(r: ResourceUse): string {
  return COMPONENTS.map((c) => String(r.peakRssMb[c] ?? '–')).join(' / ');
}
function split(r: ResourceUse): string {
  const total = r.wallS * r.machineCores;
  const parts = [...COMPONENTS.map((c) => [c, r.cpuS[c] ?? 0] as const), ['other processes', r.othersCpuS] as const];
  const used = parts.reduce((a, [, v]) => a + v, 0);
  return (
    parts.map(([name, v]) => `${name} ${num((100 * v) / total)} %`).join(', ') +
    `; idle ${num(100 - (100 * used) / total)} % (of ${r.machineCores} cores × ${num(r.wallS)} s).`
  );
}
