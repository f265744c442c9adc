import { mkdir, writeFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { runCeiling } from './ceiling.js';
import { costOfPaths } from './cost/paths.js';
import { runRamp } from './ramp.js';
import { lagChartSvg, renderPng } from './chart.js';
import type { PhaseContext } from './context.js';
import { DbObserver } from './db-stats.js';
import { parseOptions } from './options.js';
import { loadAverage } from './proc.js';
import { markdownReport } from './report.js';
import type { BenchMeasurements } from './results.js';
import { startBenchStack } from './stack.js';
import { runStorm } from './storm.js';
import { runSustained } from './sustained.js';
import { judgeTargets, orderCpuMs, sideBySideRate } from './targets.js';
import { extraReport, type ExtraPhases } from './extra-report.js';
import { floorLoopsAround, floorStormsAround } from './floor/around.js';
import { runPeers } from './peers/peers.js';
import { runCacheCheck } from './worker-cache.js';
import { GROUPS, seedCatalog } from './workload.js';
import { runFloorAb } from './floor-ab.js';
import { runFloorSettingsAb } from './floor-settings-ab.js';
import { runLeverAb } from './lever-ab.js';

// `npm run bench [-- --quick] [--rate N --ramp-step S --duration S --window S --pay-share F --storm K
// --scan-every P --scan-batch N --workers N --env KEY=VALUE --temporal sqlite|postgres|cli
// --untuned-temporal --stock-temporal --cache N --dynamic KEY=VALUE --floor --peers --peer KIND
// --timer-crash --cache-check --order --ab --lever-env KEY=VALUE --lever-dynamic KEY=VALUE
// --lever-build DIR --ab-storm --floor-ab --floor-settings-ab --port-base P
// --out DIR]`:
// a ramp to the highest rate the durable-timer path sustains, that path and the scan-based baseline
// side by side at that rate on one embedded stack with Temporal's floor (project and stock settings)
// measured around the path's open loop and storm, storms (the timer path's again with its worker
// SIGKILLed), the machine's limit, the timer path again on a warm workflow cache, then the peers;
// the targets judged from all of it (targets.ts), judged on the cold cache every phase but
// the warm pair runs on.
// --floor, --peers, --timer-crash, --cache-check, --order and --ab run those phases alone.
// Writes report.md, results.json and cancel-lag.svg/.png into --out (.bench by default).

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const { outDir } = options;
  await mkdir(outDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const loadBefore = loadAverage();
  const phaseStart = Date.now();
  let phase = 'start';
  const setPhase = (name: string) => (phase = name);
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
    let measured: BenchMeasurements | undefined;
    // The floor and the peers run at the rate the service held (with the same window and storm), else at --rate.
    let heldRate = options.rate;
    if (options.phases.service) {
      phase = 'ramp';
      const ramp = await runRamp(ctx);
      // Side by side at the highest rate the timer path sustained within its p99s: beyond it, its
      // figures would only measure a growing backlog.
      heldRate = sideBySideRate(ramp);
      const rate = heldRate;
      const load = { rate, durationS: options.durationS, windowS: options.windowS };
      // The floor's open loop and storm around the timer path's own, on both sides of it alike
      // (bench/floor/around.ts): what the targets divide is then measured at the same time.
      const loops = await floorLoopsAround(
        ctx,
        load,
        () => {
          phase = `timer path, sustained ${rate}/s`;
          return runSustained(ctx, 'timer', { rate, warmUp: false });
        },
        setPhase,
      );
      const timer = loops.middle;
      phase = `scan baseline, sustained ${rate}/s`;
      const scan = await runSustained(ctx, 'scan', { rate });
      const storms = await floorStormsAround(
        ctx,
        () => {
          phase = 'timer path, storm';
          return runStorm(ctx, 'timer');
        },
        setPhase,
      );
      const timerStorm = storms.middle;
      extra.floor = { project: loops.project, stock: loops.stock, storms: storms.storms };
      phase = 'scan baseline, storm';
      const scanStorm = await runStorm(ctx, 'scan');
      phase = 'timer path, storm, worker SIGKILLed';
      extra.timerCrash = await runStorm(ctx, 'timer', { crash: true });
      phase = 'guarded-update ceiling';
      const { levels: ceiling, clients } = await runCeiling(ctx);
      phase = "workers on the SDK's default cache";
      await stack.restartWorkers(undefined);
      phase = `timer path, sustained ${rate}/s, warm cache`;
      const warmSustained = await runSustained(ctx, 'timer', { rate, warmUp: false, group: GROUPS.timerWarm });
      phase = 'timer path, storm, warm cache';
      const warmStorm = await runStorm(ctx, 'timer', { warm: true });
      if (options.phases.peers) {
        // The peers' checkout probes go through the service: on the cache its own crash storm had.
        phase = 'workers back on the cold cache';
        await stack.restartWorkers(options.workerCache);
      }
      measured = {
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
        warm: { sustained: warmSustained, storm: warmStorm },
        floor: extra.floor,
        timerCrash: extra.timerCrash,
        ceiling,
        clients,
        cost: await costOfPaths(),
      };
      const svg = lagChartSvg(`Cancel lag, durable timer vs scan every ${options.scanEveryS} s`, [
        { label: 'timer, sustained', colour: '#1f77b4', valuesMs: timer.lagsMs },
        { label: `scan, sustained`, colour: '#d62728', valuesMs: scan.lagsMs },
        { label: `timer, storm of ${options.storm}`, colour: '#1f77b4', dashed: true, valuesMs: timerStorm.lagsMs },
        { label: `scan, storm of ${options.storm}`, colour: '#d62728', dashed: true, valuesMs: scanStorm.lagsMs },
      ]);
      await writeFile(join(outDir, 'cancel-lag.svg'), svg);
      await writeFile(join(outDir, 'cancel-lag.png'), renderPng(svg));
      // What the floor's figures divide.
      extra.order = { cpuMsPerOrder: orderCpuMs(measured), stormDrainS: timerStorm.allCompensatedS };
    }
    if (options.phases.order) {
      phase = `timer path, sustained ${options.rate}/s`;
      const sustained = await runSustained(ctx, 'timer', { rate: options.rate });
      phase = 'timer path, storm';
      extra.orderAlone = { sustained, storm: await runStorm(ctx, 'timer') };
    }
    if (options.phases.ab) {
      phase = 'lever, before and after';
      extra.leverAb = await runLeverAb(ctx, options.durationS);
    }
    if (options.phases.floorAb) {
      phase = "an order against Temporal's floor, interleaved";
      extra.floorAb = await runFloorAb(ctx, options.durationS);
    }
    if (options.phases.floorSettingsAb) {
      phase = "Temporal's floor, project against stock settings, interleaved";
      extra.floorSettingsAb = await runFloorSettingsAb(ctx, options.durationS);
    }
    if (options.phases.cacheCheck) {
      phase = 'workflow cache check';
      extra.cacheCheck = await runCacheCheck(ctx);
    }
    if (options.phases.floor && !options.phases.service) {
      // Alone, the floor's segments keep their mirror order around nothing.
      const load = { rate: heldRate, durationS: options.durationS, windowS: options.windowS };
      const nothing = async () => undefined;
      const loops = await floorLoopsAround(ctx, load, nothing, setPhase);
      const { storms } = await floorStormsAround(ctx, nothing, setPhase);
      extra.floor = { project: loops.project, stock: loops.stock, storms };
    }
    if (options.phases.timerCrash && !options.phases.service) {
      phase = 'timer path, storm, worker SIGKILLed';
      extra.timerCrash = await runStorm(ctx, 'timer', { crash: true });
    }
    if (options.phases.peers) {
      phase = 'peers';
      // With the service's phases, the scan job's sustained phase and storm are the baseline's above.
      extra.peers = await runPeers(ctx, options.peers, heldRate, { scanCrashOnly: options.phases.service });
    }
    const service = measured && { ...measured, finishedAt: new Date().toISOString() };
    const judged = service && { ...service, targets: judgeTargets(service) };
    const report = [judged ? markdownReport(judged) : `# Bench phases (${startedAt})\n`, extraReport(extra)].join('\n');
    const results = { ...(judged ?? { startedAt, options }), ...extra, finishedAt: new Date().toISOString() };
    await writeFile(join(outDir, 'results.json'), JSON.stringify(results, null, 1));
    await writeFile(join(outDir, 'report.md'), report);
    console.log(`\n${report}`);
    console.log(
      `Written: ${outDir}/report.md, results.json${judged ? ', cancel-lag.svg and .png' : ''} (logs in ${outDir}/logs)`,
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
