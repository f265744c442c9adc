import { mkdir, writeFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { runCeiling } from './ceiling.js';
import { runRamp } from './ramp.js';
import { lagChartSvg, renderPng } from './chart.js';
import type { PhaseContext } from './context.js';
import { DbObserver } from './db-stats.js';
import { parseOptions } from './options.js';
import { loadAverage } from './proc.js';
import { serviceCpuS } from './resources.js';
import { markdownReport } from './report.js';
import type { BenchMeasurements } from './results.js';
import { startBenchStack } from './stack.js';
import { runStorm } from './storm.js';
import { runSustained } from './sustained.js';
import { judgeTargets } from './targets.js';
import { seedCatalog } from './workload.js';
import { extraReport, type ExtraPhases } from './extra-report.js';
import { runFloor } from './floor/floor.js';
import { startStockTemporal } from './floor/stock-temporal.js';
import { runPeers } from './peers/peers.js';
import { runCacheCheck } from './worker-cache.js';

// `npm run bench [-- --quick] [--rate N --ramp-step S --duration S --window S --pay-share F --storm K
// --scan-every P --scan-batch N --workers N --env KEY=VALUE --temporal sqlite|postgres|cli
// --untuned-temporal --stock-temporal --cache N --floor --peers --peer KIND --timer-crash --cache-check
// --port-base P --out DIR]`:
// a ramp to the highest rate the durable-timer path sustains, that path and the scan-based baseline
// side by side at that rate on one embedded stack, storms, then the machine's limit; the issue's
// targets judged from all of it (targets.ts); then Temporal's floor and the peers (extra-report.ts).
// --floor, --peers, --timer-crash and --cache-check run those phases alone.
// Writes report.md, results.json and cancel-lag.svg/.png into --out (.bench by default).

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const { outDir } = options;
  await mkdir(outDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const loadBefore = loadAverage();
  const phaseStart = Date.now();
  let phase = 'start';
  const progress = (line: string) =>
    console.log(`[${((Date.now() - phaseStart) / 1000).toFixed(0).padStart(4)} s] ${phase}: ${line}`);
  console.log(`load average ${loadBefore}`);
  const stack = await startBenchStack(options, progress);
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    console.log('stopping the bench stack …');
    void stack.stop().then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const observer = await DbObserver.connect(stack.adminUrl);
  const ctx: PhaseContext = { options, stack, observer, progress };
  try {
    await seedCatalog(stack.adminUrl);
    const extra: ExtraPhases = {};
    let service: { results: object; report: string } | undefined;
    // The floor and the peers run at the rate the service held (with the same window and storm), else at --rate.
    let heldRate = options.rate;
    if (options.phases.service) {
      phase = 'ramp';
      const ramp = await runRamp(ctx);
      // Side by side at the highest rate the timer path sustained: beyond it, its figures would only
      // measure a growing backlog.
      const rate = ramp.maxSustained ?? ramp.steps[0]!.rate;
      phase = `timer path, sustained ${rate}/s`;
      const timer = await runSustained(ctx, 'timer', { rate, warmUp: false });
      phase = `scan baseline, sustained ${rate}/s`;
      const scan = await runSustained(ctx, 'scan', { rate });
      phase = 'timer path, storm';
      const timerStorm = await runStorm(ctx, 'timer');
      phase = 'scan baseline, storm';
      const scanStorm = await runStorm(ctx, 'scan');
      phase = 'guarded-update ceiling';
      const { levels: ceiling, clients } = await runCeiling(ctx);
      const measured: BenchMeasurements = {
        startedAt,
        finishedAt: new Date().toISOString(),
        machine: {
          cores: timer.resources.machineCores,
          memGiB: Math.round(totalmem() / 2 ** 30),
          loadBefore,
          loadAfter: loadAverage(),
        },
        options,
        ramp,
        sideBySideRate: rate,
        sustained: { timer, scan },
        storm: { timer: timerStorm, scan: scanStorm },
        ceiling,
        clients,
      };
      const results = { ...measured, targets: judgeTargets(measured) };
      service = { results, report: markdownReport(results) };
      const svg = lagChartSvg(`Cancel lag, durable timer vs scan every ${options.scanEveryS} s`, [
        { label: 'timer, sustained', colour: '#1f77b4', valuesMs: timer.lagsMs },
        { label: `scan, sustained`, colour: '#d62728', valuesMs: scan.lagsMs },
        { label: `timer, storm of ${options.storm}`, colour: '#1f77b4', dashed: true, valuesMs: timerStorm.lagsMs },
        { label: `scan, storm of ${options.storm}`, colour: '#d62728', dashed: true, valuesMs: scanStorm.lagsMs },
      ]);
      await writeFile(join(outDir, 'cancel-lag.svg'), svg);
      await writeFile(join(outDir, 'cancel-lag.png'), renderPng(svg));
      heldRate = rate;
      // What the floor's figures divide.
      extra.order = {
        cpuMsPerOrder: (1000 * serviceCpuS(timer.resources)) / Math.max(1, timer.creation.completed),
        stormDrainS: timerStorm.allCompensatedS,
      };
    }
    if (options.phases.cacheCheck) {
      phase = 'workflow cache check';
      extra.cacheCheck = await runCacheCheck(ctx);
    }
    if (options.phases.floor) {
      const load = { rate: heldRate, durationS: options.durationS, windowS: options.windowS, storm: options.storm };
      phase = "Temporal's floor";
      const project = await runFloor(ctx, 'project', load);
      phase = "Temporal's floor, stock settings";
      const stockServer = await startStockTemporal(join(outDir, 'logs'));
      try {
        extra.floor = { project, stock: await runFloor(ctx, 'stock', load, stockServer) };
      } finally {
        await stockServer.stop();
      }
    }
    if (options.phases.timerCrash) {
      phase = 'timer path, storm, worker SIGKILLed';
      extra.timerCrash = await runStorm(ctx, 'timer', { crash: true });
    }
    if (options.phases.peers) {
      phase = 'peers';
      extra.peers = await runPeers(ctx, options.peers, heldRate);
    }
    const report = [service?.report ?? `# Bench phases (${startedAt})\n`, extraReport(extra)].join('\n');
    const results = { ...(service?.results ?? { startedAt, options }), ...extra, finishedAt: new Date().toISOString() };
    await writeFile(join(outDir, 'results.json'), JSON.stringify(results, null, 1));
    await writeFile(join(outDir, 'report.md'), report);
    console.log(`\n${report}`);
    console.log(
      `Written: ${outDir}/report.md, results.json${service ? ', cancel-lag.svg and .png' : ''} (logs in ${outDir}/logs)`,
    );
  } finally {
    await observer.close().catch(() => undefined);
    if (!stopping) await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
