import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../worker/create-worker.js';
import { ORDER_SHAPES } from '../../domain/messages.js';
import { NOTIFY_REFUNDS_PATCH, SETTLE_EVERY_PAYMENT_PATCH } from '../../workflows/patches.js';
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
  it('has a history for every main path, each order path in every shape', () => {
    const orderPaths = [
      'paid-and-fulfilled',
      'expired-and-compensated',
      'late-payment-refunded',
      'customer-cancelled',
      'extended-then-expired',
      'fulfillment-failed-then-retried',
      'rejected-out-of-stock',
      'adopted-by-reconciliation',
    ];
    const names = histories.map((h) => h.name);
    const withShapes = orderPaths.flatMap((path) => [path, ...ORDER_SHAPES.map((shape) => `${path}-${shape}`)]);
    expect(names).toEqual(expect.arrayContaining(withShapes));
    expect(names).toEqual(
      expect.arrayContaining([
        'late-payment-after-close',
        'reconciliation-sweep',
        'late-payment-refund-rejected-then-retried',
      ]),
    );
    // Each shape's histories are that shape's (their runs were started with it); the first shape's have none.
    const inputOf = (name: string) => {
      const data = histories.find((h) => h.name === name)!.history.events?.[0]?.workflowExecutionStartedEventAttributes
        ?.input?.payloads?.[0]?.data;
      return JSON.parse(Buffer.from(data!).toString('utf8')) as { shape?: string };
    };
    for (const path of orderPaths) {
      for (const shape of ORDER_SHAPES) expect(inputOf(`${path}-${shape}`).shape, `${path}-${shape}`).toBe(shape);
      expect(inputOf(path).shape, path).toBeUndefined();
    }
  });

  it('every history replays against the current workflow code', async () => {
    expect(await replayAll(current)).toEqual({});
  });
});

describe('workflow changes made safe with patched()', () => {
  // Each patch with the same paths recorded before it existed and since. Before: the refunded
  // payment was not notified; the run failed, or ended with a payment unsettled. Since: the patched branch.
  const PATCHES = [
    {
      patch: NOTIFY_REFUNDS_PATCH,
      before: ['wrong-amount-refunded-then-expired', 'late-payment-refunded-after-close'],
      since: ['wrong-amount-refunded-notified-then-expired', 'late-payment-refunded-after-close-notified'],
    },
    {
      patch: SETTLE_EVERY_PAYMENT_PATCH,
      before: [
        'compensation-rejected-run-failed-before-settle-rule',
        'payment-during-update-at-end-lost-before-settle-rule',
      ],
      since: ['compensation-and-refund-rejected-then-refund-retried', 'payment-during-update-at-end-refunded'],
    },
  ];
  let unguarded: Record<string, string>;
  let guarded: Record<string, string>;

  beforeAll(async () => {
    const alwaysPatched = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: silent,
      webpackConfigHook: (config) => {
        const alias = {
          '@temporalio/workflow$': fileURLToPath(new URL('./fixtures/patched-always.ts', import.meta.url)),
        };
        return { ...config, resolve: { ...config.resolve, alias: { ...(config.resolve?.alias as object), ...alias } } };
      },
    });
    [unguarded, guarded] = [await replayAll(alwaysPatched), await replayAll(current)];
  });

  it.each(PATCHES)('has the paths of $patch recorded on both sides of it', ({ patch, before, since }) => {
    const patchesOf = (name: string) => patchesIn(histories.find((h) => h.name === name)?.history);
    for (const name of before) expect(patchesOf(name), name).not.toContain(patch);
    for (const name of since) expect(patchesOf(name), name).toContain(patch);
  });

  it.each(PATCHES)(
    'replays the histories from before $patch with its guard, and breaks them without it',
    ({ before }) => {
      for (const name of before) expect(unguarded[name], name).toMatch(/[Nn]ondeterminis/);
      for (const name of before) expect(guarded[name], name).toBeUndefined();
    },
  );
});

/** The patch ids a history's core_patch markers record. */
function patchesIn(history: (typeof histories)[number]['history'] | undefined): string[] {
  return (history?.events ?? []).flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
