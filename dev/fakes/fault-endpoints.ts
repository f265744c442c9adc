import { operation, route, type Endpoint } from '../../api/endpoint.js';
import type { FakeFaults } from './faults.js';
import { clearFaults, FaultBody, FaultServiceParam, FaultState, setFaults } from './fault-handlers.js';

/**
 * The fault-injection endpoints of the local fakes, behind the admin token. The API mounts them
 * only when FAULTS_ENABLED (api/server.ts), so otherwise these paths are 404.
 */
export const FAULT_ENDPOINTS: Endpoint<{ faults: FakeFaults }>[] = route('/admin/faults/:service', {
  put: operation({
    summary: 'Make a local fake fail or slow down',
    description:
      '`failNext: N`: the next N calls fail with a retryable error; `failAlways`: every call fails with a non-retryable one until cleared; ' +
      '`latencyMs`: each call waits that long first.',
    access: 'operator',
    devOnly: true,
    params: FaultServiceParam,
    body: FaultBody,
    success: { status: 200, description: "the fake's faults now", schema: FaultState },
    errors: [],
    handler: setFaults,
  }),
  delete: operation({
    summary: 'Heal a local fake',
    access: 'operator',
    devOnly: true,
    params: FaultServiceParam,
    success: { status: 204, description: 'the fake is healthy' },
    errors: [],
    handler: clearFaults,
  }),
});
