import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../worker/create-worker.js';
import { NOTIFY_REFUNDS_PATCH } from '../../workflows/patches.js';
import { loadHistoryFixtures } from './history-fixtures.js';

/**
 * Workflows running in production replay their history on every worker restart. These histories,
 * recorded from each main path (npm run record:histories), must replay against the current code:
 * a change that alters the commands an old history made fails here, not in production.
 */
let histories: Awaited<ReturnType<typeof loadHistoryFixtures>>;
let current: WorkflowBundle;

beforeAll(async () => {
  histories = await loadHistoryFixtures();
  current = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silent });
});

async function replayAll(workflowBundle: WorkflowBundle): Promise<Record<string, string>> {
  const failures: Record<string, string> = {};
  const results = Worker.runReplayHistories(
    { workflowBundle },
    histories.map(({ name, history }) => ({ workflowId: name, history })),
  );
  for await (const result of results) if (result.error) failures[result.workflowId] = String(result.error);
  return failures;
}

describe('replaying recorded histories', () => {
  it('has a history for every main path', () => {
    expect(histories.map((h) => h.name)).toEqual(
      expect.arrayContaining([
        'paid-and-fulfilled',
        'expired-and-compensated',
        'late-payment-refunded',
        'customer-cancelled',
        'extended-then-expired',
        'fulfilment-failed-then-retried',
        'rejected-out-of-stock',
        'late-payment-after-close',
        'reconciliation-sweep',
        'adopted-by-reconciliation',
      ]),
    );
  });

  it('every history replays against the current workflow code', async () => {
    expect(await replayAll(current)).toEqual({});
  });
});

describe('a workflow change made safe with patched()', () => {
  // Recorded before the refund notification existed; the payment in each is refunded.
  const beforeThePatch = ['wrong-amount-refunded-then-expired', 'late-payment-refunded-after-close'];
  // The same paths recorded since: they took the patched branch (and replay, like every history, above).
  const afterThePatch = ['wrong-amount-refunded-notified-then-expired', 'late-payment-refunded-after-close-notified'];

  it('has the refund paths recorded on both sides of the patch', () => {
    const patchesOf = (name: string) => patchesIn(histories.find((h) => h.name === name)?.history);
    for (const name of beforeThePatch) expect(patchesOf(name), name).toEqual([]);
    for (const name of afterThePatch) expect(patchesOf(name), name).toEqual([NOTIFY_REFUNDS_PATCH]);
  });

  it('replays the old histories with the guard, and breaks them without it', async () => {
    const unguarded = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: silent,
      webpackConfigHook: (config) => {
        const alias = { '@temporalio/workflow$': fileURLToPath(new URL('./fixtures/patched-always.ts', import.meta.url)) };
        return { ...config, resolve: { ...config.resolve, alias: { ...(config.resolve?.alias as object), ...alias } } };
      },
    });
    const broken = await replayAll(unguarded);
    for (const name of beforeThePatch) expect(broken[name], name).toMatch(/[Nn]ondeterminis/);

    const guarded = await replayAll(current);
    for (const name of beforeThePatch) expect(guarded[name], name).toBeUndefined();
  });
});

/** The patch ids a history's core_patch markers record. */
function patchesIn(history: (typeof histories)[number]['history'] | undefined): string[] {
  return (history?.events ?? []).flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
