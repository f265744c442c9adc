import type { BenchResults } from './results.js';
import { TARGETS_STATED_FOR, type TargetKind, type TargetVerdict } from './targets.js';

const BEHIND: Record<TargetKind, string> = {
  'order-cost': 'CPU per order and the sustained rate',
  'storm-drain': "the storm's drain",
  'storm-latency': 'answers during the storm',
  floor: "the distance to Temporal's floor",
  safety: 'cancellations early, lost or doubled',
  'temporal-actions': 'Temporal actions and history per order',
};

/**
 * The report's Targets section: each target with its verdict and figure, then, once per kind of
 * miss, the measured bottleneck behind it and what would lift it.
 */
export function targetsSection(r: BenchResults): string[] {
  const missed = r.targets.filter((t) => !t.within && t.bottleneck);
  const kinds = [...new Set(missed.map((t) => t.kind))];
  return [
    '## Targets',
    '',
    `Judged by the bench from this run's figures (bench/targets.ts). They are stated for ${TARGETS_STATED_FOR}; a run that differs shows its figures as "not judged". CPU per order, end to end, is PostgreSQL, Temporal, the worker(s) and the API together, not the bench's own process (its load generator and the scan baseline's canceller).`,
    '',
    ...r.targets.map(line),
    ...kinds.flatMap((kind) => {
      const b = missed.find((t) => t.kind === kind)!.bottleneck!;
      return [
        '',
        `**Behind the ${missed.filter((t) => t.kind === kind).length === 1 ? 'miss' : 'misses'}: ${BEHIND[kind]}** (${missed
          .filter((t) => t.kind === kind)
          .map((t) => t.id)
          .join(', ')})`,
        '',
        ...b.measured.map((m) => `- ${m}`),
        `- What would lift it: ${b.lift}`,
      ];
    }),
  ];
}

function line(t: TargetVerdict): string {
  const verdict =
    t.verdict === 'not judged'
      ? `not judged (${t.notJudgedBecause}; the figure is ${t.within ? 'within' : 'beyond'} the bound)`
      : `**${t.verdict}**`;
  const target = t.aim ? `Aim: ${t.target}` : t.target.charAt(0).toUpperCase() + t.target.slice(1);
  return `- ${target}: ${t.measured} — ${verdict}`;
}
