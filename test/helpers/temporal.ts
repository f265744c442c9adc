import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes.js';

/**
 * The SDK's test environments, started from the binaries global setup resolved (offline, the SDK's
 * own download cannot work). Each starts its own server: tear it down in afterAll.
 */

/** The Java test server: timers skip ahead whenever the test awaits a workflow result. */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: executable(inject('testServerPath')) } });
  // The Java server refuses an upsert of an attribute it does not know, so register ours first.
  const { IndexedValueType } = proto.temporal.api.enums.v1;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((k) => [k.name, IndexedValueType[`INDEXED_VALUE_TYPE_${k.type}`]])),
  });
  return env;
}

/**
 * A real Temporal server (the CLI's dev server, in memory) with the order search attributes
 * registered; with `uiPort`, its Web UI too (headless otherwise).
 */
export function createLocalEnv(options: { uiPort?: number | undefined } = {}): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: executable(inject('devServerPath')),
      searchAttributes: [...SEARCH_ATTRIBUTES],
      ...(options.uiPort === undefined ? {} : { ui: true, uiPort: options.uiPort }),
    },
  });
}

function executable(path: string | null) {
  return path === null ? undefined : ({ type: 'existing-path', path } as const);
}
