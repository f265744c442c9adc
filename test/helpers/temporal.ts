import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import { findFreePort } from '../../dev/ports.js';
import { TEMPORAL_SERVER_MISSING } from '../../dev/temporal-binaries.js';
import { searchAttributeTypes } from '../../dev/temporal/namespace.js';
import { freeServerPorts } from '../../dev/temporal/server.js';
import { startTemporal } from '../../dev/temporal/start.js';

/**
 * The test environments, started from the binaries global setup resolved (offline, the SDK's own
 * download cannot work). Each starts its own server: tear it down in afterAll.
 */

/**
 * The Java test server: timers skip ahead whenever the test awaits a workflow result. `dataConverter`:
 * its client's (env.client), e.g. the service's encryption.
 */
export async function createTimeSkippingEnv(
  options: { dataConverter?: DataConverter | undefined } = {},
): Promise<TestWorkflowEnvironment> {
  const path = inject('testServerPath');
  const env = await startWithinSdkDeadline(() =>
    TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: path === null ? undefined : { type: 'existing-path', path } },
      ...(options.dataConverter ? { client: { dataConverter: options.dataConverter } } : {}),
    }),
  );
  // The Java server refuses an upsert of an attribute it does not know, so register ours first.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: searchAttributeTypes(),
  });
  return env;
}

/**
 * The SDK gives the test server a fixed 5 s to listen, which a loaded 2-core machine can miss (the
 * JVM starting beside other suites): a start that missed it is tried again, twice at most.
 */
async function startWithinSdkDeadline<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      const missed = err instanceof Error && /did not start within/.test(err.message);
      if (!missed || attempt === 3) throw err;
      console.warn(`the Temporal test server missed the SDK's 5-s start (attempt ${attempt}); starting it again`);
    }
  }
}

export interface LocalEnv {
  env: TestWorkflowEnvironment;
  /** The Web UI, when asked for. */
  webUiUrl: string | undefined;
  /** Tears down the environment and the server. */
  teardown(): Promise<void>;
}

/**
 * A real Temporal Server, as `npm start` runs it but in memory and on free ports, with the order
 * search attributes registered; with `webUi`, its Web UI too, calling `codecEndpoint` (with the
 * browser's cookies) when given. `dataConverter`: env.client's.
 */
export async function createLocalEnv(
  options: {
    webUi?: boolean | undefined;
    codecEndpoint?: string | undefined;
    dataConverter?: DataConverter | undefined;
  } = {},
): Promise<LocalEnv> {
  const binaries = inject('temporalServer');
  if (binaries === null) throw new Error(TEMPORAL_SERVER_MISSING);
  const logDir = await mkdtemp(join(tmpdir(), 'order-lifecycle-temporal-'));
  const uiPort = options.webUi ? await findFreePort() : undefined;
  const temporal = await startTemporal({
    binaries,
    persistence: { kind: 'sqlite' },
    ports: await freeServerPorts(),
    uiPort,
    uiCodecEndpoint: options.codecEndpoint,
    namespace: 'default',
    logDir,
  }).catch(async (err: unknown) => {
    await rm(logDir, { recursive: true, force: true });
    throw err;
  });
  const env = await TestWorkflowEnvironment.createFromExistingServer({
    address: temporal.address,
    namespace: 'default',
    ...(options.dataConverter ? { client: { dataConverter: options.dataConverter } } : {}),
  });
  return {
    env,
    webUiUrl: uiPort === undefined ? undefined : `http://127.0.0.1:${uiPort}`,
    async teardown() {
      await env.teardown();
      await temporal.webUi?.stop();
      await temporal.server.kill(); // in memory: nothing to shut down cleanly for
      await rm(logDir, { recursive: true, force: true });
    },
  };
}
