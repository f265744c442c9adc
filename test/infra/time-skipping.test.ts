import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTimeSkippingEnv } from '../helpers/temporal.js';
import { sleepThirtyMinutes } from './fixtures/workflows.js';

const taskQueue = 'infra-time-skipping';
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

it('the Java test server skips a 30-minute timer', async () => {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./fixtures/workflows.ts', import.meta.url)),
  });
  const started = Date.now();
  const workflowTime = await worker.runUntil(
    env.client.workflow.execute(sleepThirtyMinutes, { taskQueue, workflowId: `sleep-${randomUUID()}` }),
  );
  expect(workflowTime).toBeGreaterThanOrEqual(30 * 60_000);
  expect(Date.now() - started).toBeLessThan(10_000);
});
