import type { CeilingLevel, ClientCost } from './ceiling.js';
import type { FloorAround } from './floor/around.js';
import type { BenchOptions } from './options.js';
import type { RampResult } from './ramp.js';
import type { StormResult } from './storm.js';
import type { SustainedResult } from './sustained.js';
import type { TargetVerdict } from './targets.js';
import type { PathCost } from './cost/paths.js';

/** Everything one run measured (results.json), before the targets are judged from it. */
export interface BenchMeasurements {
  startedAt: string;
  finishedAt: string;
  machine: { cores: number; memGiB: number; loadBefore: string; loadAfter: string };
  options: BenchOptions;
  ramp: RampResult;
  /** The rate of the side-by-side phases: the ramp's highest sustained rate. */
  sideBySideRate: number;
  sustained: { timer: SustainedResult; scan: SustainedResult };
  storm: { timer: StormResult; scan: StormResult };
  /** The timer path's sustained phase and storm again, on the SDK's default workflow cache (every other phase runs on `options.workerCache`). */
  warm: { sustained: SustainedResult; storm: StormResult };
  /** Temporal's floor at the rate the ramp held, around the timer path's sustained phase and storm: the project's settings and the stock ones. */
  floor: FloorAround;
  /** The timer path's storm with its worker SIGKILLed a third of the way. */
  timerCrash: StormResult;
  ceiling: CeilingLevel[];
  clients: ClientCost[];
  /** What each path of one order costs on Temporal, from its recorded history (`npm run cost`). */
  cost: PathCost[];
}

/** What results.json holds: the measurements and each target's verdict. */
export interface BenchResults extends BenchMeasurements {
  targets: TargetVerdict[];
}
