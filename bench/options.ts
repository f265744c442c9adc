import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EMBEDDED_TEMPORAL_STORE } from '../dev/embedded.js';
import { PROJECT_ROOT } from '../dev/paths.js';
import { LOW_PORTS } from '../dev/ports.js';
import { PEER_KINDS, type PeerKind } from './peers/kinds.js';

/**
 * The Temporal the stack runs: Temporal Server 1.32 in one process on a SQLite file or on the
 * bench's PostgreSQL (its own databases), or the CLI's dev server (Server 1.29.1, the before).
 */
export const BENCH_TEMPORALS = {
  sqlite: 'Temporal Server 1.32 (one process, SQLite file, one history shard)',
  postgres:
    "Temporal Server 1.32 (one process, on the bench's PostgreSQL: databases temporal and temporal_visibility, four history shards)",
  cli: 'Temporal CLI dev server 1.5.1 (Server 1.29.1, SQLite file)',
} as const;
export type BenchTemporal = keyof typeof BENCH_TEMPORALS;

/** What one `npm run bench` does; `--quick` is a short smoke run, the default is the full measurement. */
export interface BenchOptions {
  quick: boolean;
  /**
   * The ramp's last step (orders/s); 40 with --quick, so a quick run still reaches the target rate.
   * The side-by-side phases run at the highest step within the rate target's p99s (targets.ts).
   */
  rate: number;
  /**
   * Seconds each ramp step offers its rate: by default 1.5× the payment window (30 s, 15 with
   * --quick), so that a step's last third carries its own orders' expiries on top of its placements,
   * as the sustained phases do. With 20-s steps and a 20-s window a step held 50/s on placements
   * alone, and 30 s of 50/s then queued (2026-12-02).
   */
  rampStepS: number;
  /** Seconds each side-by-side phase keeps creating orders. */
  durationS: number;
  /** PAYMENT_WINDOW of the run (seconds): orders expire this long after creation. */
  windowS: number;
  /** Share of the timer path's orders paid through the webhook. */
  payShare: number;
  /** Orders expiring in the same second in each storm. */
  storm: number;
  /**
   * Orders in each crash storm (the service's worker or a peer SIGKILLed a third of the way): 30 %
   * of a storm. What a crash loses or doubles shows at any size, and on a cold cache a storm of
   * 2,000 drains in minutes: four crash storms at full size would take the bench past 25 minutes.
   */
  crashStorm: number;
  /** Period of the baseline scan-based canceller (seconds) and its batch size. */
  scanEveryS: number;
  scanBatch: number;
  /** Worker processes in the stack (`--workers`), all polling the one task queue. */
  workers: number;
  /** Fixed loopback ports of the bench's own stack (never the npm start ones); each worker has its own two metrics ports. */
  ports: {
    postgres: number;
    temporal: number;
    temporalUi: number;
    api: number;
    workers: Array<{ metrics: number; sdkMetrics: number }>;
    /** The floor's worker's SDK metrics exporter (bench/floor/). */
    floorSdkMetrics: number;
    /** The Redis peer's redis-server (bench/peers/redis-server.ts). */
    redis: number;
  };
  /** Seconds per connection count in the guarded-update ceiling. */
  ceilingS: number;
  ceilingConnections: number[];
  /** Environment overrides for the worker and the API (tuning variants), as KEY=VALUE. */
  serviceEnv: Record<string, string>;
  /** Which Temporal (`--temporal`); the default is `npm start`'s. */
  temporal: BenchTemporal;
  /** `--temporal cli` only: the dev server without DEV_SERVER_TUNING (dev/temporal/cli-dev-server.ts), the "before" of that tuning. */
  untunedTemporal: boolean;
  /**
   * Which phases run: the service's, the floor, the peers and the timer storm with its worker
   * SIGKILLed by default; `--floor`, `--peers`, `--timer-crash`, `--cache-check` (a short timer
   * run that reads the workers' sticky-cache metrics) and `--order` (the timer path's sustained
   * phase at `--rate` and its storm, no ramp: one side of a lever's before and after), `--ab`
   * (a lever's before and after interleaved, lever-ab.ts), `--floor-ab` (the order against
   * Temporal's floor interleaved, floor-ab.ts) and `--floor-settings-ab` (the floor on the project's
   * settings against the stock ones interleaved, floor-settings-ab.ts) run those alone.
   */
  phases: {
    service: boolean;
    floor: boolean;
    peers: boolean;
    cacheCheck: boolean;
    timerCrash: boolean;
    order: boolean;
    ab: boolean;
    floorAb: boolean;
    floorSettingsAb: boolean;
  };
  /** `--stock-temporal`: the stack's Temporal Server on Temporal's own dynamic config, none of the project's (the floor's stock run has a server of its own either way). */
  stockTemporal: boolean;
  /**
   * `--cache N` (10 by default): the service's workers keep at most N workflow runs in their cache
   * (WORKER_MAX_CACHED_WORKFLOWS, bench/worker-env.ts) in every phase but the warm pair, so that open runs are many times the cache, as in production
   * (a 30-minute window at 30 orders/s holds about 54,000 open runs per worker). The warm pair
   * (sustained and storm) runs on the SDK's default cache, for comparison.
   */
  workerCache: number;
  /** `--dynamic KEY=VALUE`: settings added to the stack's server's dynamic config (a lever to try); the value is YAML. */
  dynamicConfig: Record<string, string>;
  /** `--ab`: the lever the interleaved comparison turns on and off, for the workers (`--lever-env`) and the server (`--lever-dynamic`). */
  leverEnv: Record<string, string>;
  leverDynamic: Record<string, string>;
  /** `--lever-server-env KEY=VALUE`: variables for Temporal Server's process (GOGC, METRICS_PORT), the server restarted before every segment. */
  leverServerEnv: Record<string, string>;
  /** `--lever-build DIR`: another checkout whose compiled service the B side's workers and API run (a code change). */
  leverBuild: string | undefined;
  /** `--ab-storm`: `--ab`'s and `--floor-ab`'s segments are storms of `--storm` runs instead of sustained runs (a lever that acts in storms; the storm target's ratio). */
  abStorm: boolean;
  /** The peers the peer phase runs (`--peer scan --peer redis …`; all by default). */
  peers: PeerKind[];
  /** Where the report, results and logs go, absolute (`--out`: absolute, or relative to the project root). */
  outDir: string;
}

/** The bench's fixed ports are port-base + 1 to port-base + 30 (`ports` below). */
const PORTS_TAKEN = 30;
/** Linux's default ephemeral range starts here (net.ipv4.ip_local_port_range). */
const EPHEMERAL_PORTS_START = 32_768;

/** The cold phases' workflow cache: 200 open runs at 10 orders/s and a 20-s window are 20× it. */
const COLD_CACHE = 10;

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rate: { type: 'string' },
      duration: { type: 'string' },
      'ramp-step': { type: 'string' },
      window: { type: 'string' },
      'pay-share': { type: 'string' },
      storm: { type: 'string' },
      'scan-every': { type: 'string' },
      'scan-batch': { type: 'string' },
      'port-base': { type: 'string' },
      workers: { type: 'string' },
      env: { type: 'string', multiple: true },
      temporal: { type: 'string', default: EMBEDDED_TEMPORAL_STORE },
      'untuned-temporal': { type: 'boolean', default: false },
      floor: { type: 'boolean', default: false },
      peers: { type: 'boolean', default: false },
      'cache-check': { type: 'boolean', default: false },
      'timer-crash': { type: 'boolean', default: false },
      order: { type: 'boolean', default: false },
      ab: { type: 'boolean', default: false },
      'floor-ab': { type: 'boolean', default: false },
      'floor-settings-ab': { type: 'boolean', default: false },
      'lever-env': { type: 'string', multiple: true },
      'lever-dynamic': { type: 'string', multiple: true },
      'lever-server-env': { type: 'string', multiple: true },
      'lever-build': { type: 'string' },
      'ab-storm': { type: 'boolean', default: false },
      peer: { type: 'string', multiple: true },
      'stock-temporal': { type: 'boolean', default: false },
      cache: { type: 'string' },
      dynamic: { type: 'string', multiple: true },
      out: { type: 'string', default: '.bench' },
    },
  });
  const quick = values.quick;
  const num = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number, got ${value}`);
    return n;
  };
  // Below Linux's range of ephemeral ports (32768-60999 by default): a fixed port inside it can be
  // the random local port of some connection, even of the bench's own health check to that port.
  const base = num(values['port-base'], 24_000, 'port-base');
  // Above the ports Temporal's membership picks at random (dev/ports.ts) and below the ephemeral range.
  if (!Number.isInteger(base) || base < LOW_PORTS.end || base + PORTS_TAKEN >= EPHEMERAL_PORTS_START)
    throw new Error(
      `--port-base: expected a whole number from ${LOW_PORTS.end} to ${EPHEMERAL_PORTS_START - PORTS_TAKEN - 1}, got ${values['port-base']}`,
    );
  const workers = num(values.workers, 1, 'workers');
  if (!Number.isInteger(workers)) throw new Error(`--workers: expected a whole number, got ${values.workers}`);
  const temporal = values.temporal ?? EMBEDDED_TEMPORAL_STORE;
  if (!(temporal in BENCH_TEMPORALS))
    throw new Error(`--temporal: expected one of ${Object.keys(BENCH_TEMPORALS).join(', ')}, got ${temporal}`);
  if (values['untuned-temporal'] && temporal !== 'cli')
    throw new Error("--untuned-temporal: only with --temporal cli (the tuning it drops is the dev server's)");
  if (values['stock-temporal'] && temporal === 'cli')
    throw new Error('--stock-temporal: Temporal Server 1.32 only (the CLI has --untuned-temporal)');
  const peers = (values.peer ?? [...PEER_KINDS]).map((kind) => {
    if (!(PEER_KINDS as readonly string[]).includes(kind))
      throw new Error(`--peer: expected one of ${PEER_KINDS.join(', ')}, got ${kind}`);
    return kind as PeerKind;
  });
  const storm = Math.round(num(values.storm, quick ? 300 : 2_000, 'storm'));
  const selected =
    values.floor ||
    values.peers ||
    values['cache-check'] ||
    values['timer-crash'] ||
    values.order ||
    values.ab ||
    values['floor-ab'] ||
    values['floor-settings-ab'];
  const leverEnv = keyValues(values['lever-env'], 'lever-env');
  const leverDynamic = keyValues(values['lever-dynamic'], 'lever-dynamic');
  const leverServerEnv = keyValues(values['lever-server-env'], 'lever-server-env');
  if (Object.keys(leverServerEnv).length && temporal === 'cli')
    throw new Error('--lever-server-env: Temporal Server 1.32 only (the CLI dev server takes no such variables)');
  const leverBuild = values['lever-build'] === undefined ? undefined : resolve(values['lever-build']);
  const levers = [leverEnv, leverDynamic, leverServerEnv].reduce((n, l) => n + Object.keys(l).length, 0);
  if (values.ab && levers === 0 && !leverBuild)
    throw new Error(
      '--ab: name the lever with --lever-env KEY=VALUE, --lever-dynamic KEY=VALUE, --lever-server-env KEY=VALUE or --lever-build DIR',
    );
  if (values['ab-storm'] && !values.ab && !values['floor-ab'])
    throw new Error('--ab-storm: only with --ab or --floor-ab');
  const windowS = num(values.window, quick ? 10 : 20, 'window');
  return {
    quick,
    rate: num(values.rate, quick ? 40 : 100, 'rate'),
    rampStepS: num(values['ramp-step'], windowS * 1.5, 'ramp-step'),
    durationS: num(values.duration, quick ? 15 : 30, 'duration'),
    windowS,
    payShare: Math.min(1, num(values['pay-share'], 0.1, 'pay-share')),
    storm,
    crashStorm: Math.ceil(storm * 0.3),
    scanEveryS: num(values['scan-every'], 5, 'scan-every'),
    scanBatch: Math.round(num(values['scan-batch'], 100, 'scan-batch')),
    workers,
    ports: {
      postgres: base + 1,
      temporal: base + 2,
      temporalUi: base + 3,
      api: base + 4,
      // Worker i (from 0) on base + 5 + 2i and base + 6 + 2i: the first keeps the ports one worker always had.
      workers: Array.from({ length: workers }, (_, i) => ({ metrics: base + 5 + 2 * i, sdkMetrics: base + 6 + 2 * i })),
      // Above any worker's pair (up to 10 workers).
      floorSdkMetrics: base + 29,
      redis: base + 30,
    },
    ceilingS: quick ? 2 : 4,
    ceilingConnections: quick ? [1, 4, 8] : [1, 2, 4, 8, 16],
    serviceEnv: keyValues(values.env, 'env'),
    temporal: temporal as BenchTemporal,
    untunedTemporal: values['untuned-temporal'],
    phases: {
      service: !selected,
      floor: !selected || values.floor,
      peers: !selected || values.peers,
      cacheCheck: values['cache-check'],
      timerCrash: !selected || values['timer-crash'],
      order: values.order,
      ab: values.ab,
      floorAb: values['floor-ab'],
      floorSettingsAb: values['floor-settings-ab'],
    },
    stockTemporal: values['stock-temporal'],
    workerCache: Math.max(2, Math.round(num(values.cache, COLD_CACHE, 'cache'))),
    dynamicConfig: keyValues(values.dynamic, 'dynamic'),
    leverEnv,
    leverDynamic,
    leverServerEnv,
    leverBuild,
    abStorm: values['ab-storm'],
    peers,
    outDir: resolve(PROJECT_ROOT, values.out),
  };
}

function keyValues(pairs: string[] | undefined, flag: string): Record<string, string> {
  return Object.fromEntries(
    (pairs ?? []).map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`--${flag}: expected KEY=VALUE, got ${pair}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}
