import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dropDatabase } from '../../dev/databases.js';
import { requiredVersion } from '../../dev/go-modules.js';
import { freeServerPorts } from '../../dev/temporal/server.js';
import { startTemporal, type TemporalOptions } from '../../dev/temporal/start.js';
import type { TemporalServerBinaries } from '../../dev/temporal-binaries.js';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes.js';
import { createLocalEnv, type LocalEnv } from '../helpers/temporal.js';
import { markPaid } from './fixtures/workflows.js';

/** Temporal Server as the project runs it: the version pinned, the search attributes, restarts, PostgreSQL, the cluster. */
const WORKFLOWS_PATH = fileURLToPath(new URL('./fixtures/workflows.ts', import.meta.url));
const taskQueue = 'infra-temporal';

describe("in memory (the tests' server)", () => {
  let local: LocalEnv;
  beforeAll(async () => {
    local = await createLocalEnv();
  });
  afterAll(() => local?.teardown());

  it('is the version dev/go/temporal-server/go.mod pins', async () => {
    const { serverVersion } = await local.env.connection.workflowService.getSystemInfo({});
    expect(serverVersion).toBe(requiredVersion('temporal-server', 'go.temporal.io/server'));
  });

  it('registers the search attributes and finds workflows by them', async () => {
    const workflowId = await runMarkPaid(local.env.nativeConnection, local.env.client);
    expect(await listed(local.env.client, `WorkflowId = "${workflowId}" AND OrderStatus = "PAID"`)).toEqual([
      workflowId,
    ]);
  });
});

describe('restarted on its store', () => {
  const binaries = () => inject('temporalServer') as TemporalServerBinaries;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'order-lifecycle-temporal-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    for (const name of ['temporal', 'temporal_visibility']) await dropDatabase(inject('postgresUrl'), name);
  });

  it('a SQLite file keeps the namespace, the search attributes and the histories', async () => {
    await expectKeptAcrossRestart({
      binaries: binaries(),
      persistence: { kind: 'sqlite', file: join(dir, 'temporal.sqlite') },
      ports: await freeServerPorts(),
      namespace: 'default',
      logDir: dir,
    });
  });

  it('PostgreSQL, as a cluster of one process per service, keeps them too (its schema set up again at the restart)', async () => {
    // On the run's PostgreSQL: only this test uses the databases temporal and temporal_visibility.
    await expectKeptAcrossRestart({
      binaries: binaries(),
      persistence: { kind: 'postgres', adminUrl: inject('postgresUrl') },
      cluster: true,
      ports: await freeServerPorts(),
      namespace: 'default',
      logDir: dir,
    });
  });
});

/**
 * Starts the server on a new store, runs a workflow, stops it, starts it again. The second start found
 * the namespace (the same one: its id) and every search attribute in the store and registered nothing,
 * so they were kept, not made again by start-up; the workflow is still listed by them and its history
 * complete.
 */
async function expectKeptAcrossRestart(options: TemporalOptions): Promise<void> {
  let workflowId: string;
  let namespaceId: string | undefined;
  {
    const temporal = await startTemporal(options);
    try {
      // A new store has nothing: the first start registers all of it, as the second would have to had the store lost them.
      expect(temporal.registered).toEqual({ namespace: true, searchAttributes: SEARCH_ATTRIBUTES.map((k) => k.name) });
      const connection = await NativeConnection.connect({ address: temporal.address });
      const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
      try {
        namespaceId = await namespaceIdOf(client, options.namespace);
        workflowId = await runMarkPaid(connection, client);
      } finally {
        await connection.close();
        await client.connection.close();
      }
    } finally {
      await temporal.stop();
    }
  }
  const temporal = await startTemporal(options);
  try {
    expect(temporal.registered).toEqual({ namespace: false, searchAttributes: [] });
    const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    try {
      expect(await namespaceIdOf(client, options.namespace)).toBe(namespaceId);
      expect(await listed(client, `WorkflowId = "${workflowId}" AND OrderStatus = "PAID"`)).toEqual([workflowId]);
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      expect(history.events?.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
    } finally {
      await client.connection.close();
    }
  } finally {
    await temporal.stop();
  }
}

/** A namespace's id, made when it is registered: a namespace registered again would have another. */
async function namespaceIdOf(client: Client, namespace: string): Promise<string | undefined> {
  const { namespaceInfo } = await client.workflowService.describeNamespace({ namespace });
  expect(namespaceInfo?.id).toBeTruthy();
  return namespaceInfo?.id ?? undefined;
}

async function runMarkPaid(connection: NativeConnection, client: Client): Promise<string> {
  const worker = await Worker.create({ connection, taskQueue, workflowsPath: WORKFLOWS_PATH });
  const workflowId = `paid-${randomUUID()}`;
  await worker.runUntil(
    client.workflow.execute(markPaid, {
      taskQueue,
      workflowId,
    }),
  );
  return workflowId;
}

/** Visibility is updated asynchronously, so a workflow may take a moment to appear. */
async function listed(client: Client, query: string): Promise<string[]> {
  let found: string[] = [];
  for (let attempt = 0; attempt < 50 && found.length === 0; attempt++) {
    if (attempt > 0) await sleep(200);
    found = [];
    for await (const execution of client.workflow.list({ query })) found.push(execution.workflowId);
  }
  return found;
}
