import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CustomerIdKey } from '../../domain/search-attributes.js';
import { createLocalEnv } from '../helpers/temporal.js';
import { markPaid } from './fixtures/workflows.js';

const taskQueue = 'infra-local';
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createLocalEnv();
});
afterAll(() => env?.teardown());

it('the dev server registers the search attributes and finds workflows by them', async () => {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./fixtures/workflows.ts', import.meta.url)),
  });
  const customerId = `customer-${randomUUID()}`;
  const workflowId = `paid-${randomUUID()}`;
  await worker.runUntil(
    env.client.workflow.execute(markPaid, { taskQueue, workflowId, typedSearchAttributes: [{ key: CustomerIdKey, value: customerId }] }),
  );

  // Visibility is updated asynchronously, so the workflow may take a moment to appear.
  const query = `CustomerId = "${customerId}" AND OrderStatus = "PAID"`;
  let found: string[] = [];
  for (let attempt = 0; attempt < 50 && found.length === 0; attempt++) {
    if (attempt > 0) await sleep(200);
    found = [];
    for await (const execution of env.client.workflow.list({ query })) found.push(execution.workflowId);
  }
  expect(found).toEqual([workflowId]);
});
