import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { encryptedDataConverter } from '../../lib/payload-encryption.js';
import { PAYLOAD_KEYS } from '../helpers/payload-keys.js';
import { quietBundlerLogger } from '../helpers/quiet-bundler-logger.js';
import { WORKFLOWS_PATH } from '../../worker/workflow-bundle.js';
import { ENCRYPTED_HISTORY, loadHistoryFixtures } from './history-fixtures.js';

/**
 * Every recorded path (npm run record:histories) must replay against the current workflow code: a
 * change that alters the commands of a path fails here, and is then recorded anew and shipped as a
 * new Worker Deployment build, never as a branch for older runs.
 */
let histories: Awaited<ReturnType<typeof loadHistoryFixtures>>;
let current: WorkflowBundle;

beforeAll(async () => {
  histories = await loadHistoryFixtures();
  current = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
});

/** The paths of an order, and of the other workflows, that each have a history. */
const PATHS = [
  'paid-and-fulfilled',
  'double-payment-refunded',
  'expired-and-compensated',
  'late-payment-refunded',
  'late-payment-refunded-after-close-notified',
  'wrong-amount-refunded-notified-then-expired',
  'customer-cancelled',
  'extended-then-expired',
  'fulfillment-failed-then-retried',
  'rejected-out-of-stock',
  'late-payment-after-close',
  'reconciliation-sweep',
  'adopted-by-reconciliation',
  'cancelled-then-refund-rejected-then-retried',
  'late-payment-refund-rejected-then-retried',
  'payment-during-update-at-end-refunded',
  'database-outage-then-paid',
  'provider-closed-then-cancelled',
  'provider-paid-at-deadline',
  'provider-silent-then-force-cancelled',
  'customer-action-then-cancelled-after-grace',
  'awaiting-funds-then-paid',
  'awaiting-funds-then-failed',
  'force-cancelled-then-paid-refunded',
  'provider-outage-continued-as-new',
  'provider-outage-continued-then-cancelled',
  'provider-outage-hour-then-cancelled',
  'database-outage-hour-then-cancelled',
  'refund-failed-later-then-retried',
  'refund-failure-before-its-record-then-retried',
  'placed-during-outage-extended-then-paid',
  'paid-in-time-signal-lost',
  'paid-adopted-with-a-dead-letter-then-retried',
  'placement-retried-after-its-run-ended',
  'reminded-then-paid',
];

describe('replaying recorded histories', () => {
  it('has exactly one history for every path, and the one recorded encrypted', () => {
    expect(histories.map((h) => h.name).sort()).toEqual([...PATHS, ENCRYPTED_HISTORY].sort());
  });

  it('every history replays against the current workflow code', async () => {
    const failures: Record<string, string> = {};
    const results = Worker.runReplayHistories(
      // Through the codec, as the worker runs: histories sealed with the tests' key open, older ones pass through.
      { workflowBundle: current, dataConverter: encryptedDataConverter(PAYLOAD_KEYS) },
      histories.map(({ name, history }) => ({ workflowId: name, history })),
    );
    for await (const result of results) if (result.error) failures[result.workflowId] = String(result.error);
    expect(failures).toEqual({});
  });
});

describe('a history recorded with its payloads encrypted', () => {
  const encrypted = () => histories.find((h) => h.name === ENCRYPTED_HISTORY)!.history;

  it('replays through the codec', async () => {
    await Worker.runReplayHistory(
      { workflowBundle: current, dataConverter: encryptedDataConverter(PAYLOAD_KEYS) },
      encrypted(),
      ENCRYPTED_HISTORY,
    );
  });

  it('cannot be replayed without it, nor with keys that do not include its own', async () => {
    await expect(
      Worker.runReplayHistory({ workflowBundle: current }, encrypted(), ENCRYPTED_HISTORY),
    ).rejects.toThrow();
    const otherKey = encryptedDataConverter([{ id: 'other', key: Buffer.alloc(32, 'o') }]);
    await expect(
      Worker.runReplayHistory({ workflowBundle: current, dataConverter: otherKey }, encrypted(), ENCRYPTED_HISTORY),
    ).rejects.toThrow(/encrypted with key \W*test-1\W* which PAYLOAD_ENCRYPTION_KEYS does not list/);
  });
});
