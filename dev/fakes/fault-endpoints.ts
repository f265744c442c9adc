import { z } from 'zod';
import { contract, handled, type Endpoint } from '../../api/endpoint.js';
import { FAKE_SERVICES, type FakeFaults } from './faults.js';

const FaultServiceParam = z.object({ service: z.enum(FAKE_SERVICES) });

const FaultBody = z.strictObject({
  failNext: z.number().int().min(0).max(1_000_000).optional(),
  failAlways: z.boolean().optional(),
  latencyMs: z.number().int().min(0).max(120_000).optional(),
});

const FaultState = z.strictObject({
  service: FaultServiceParam.shape.service,
  failNext: z.int(),
  failAlways: z.boolean(),
  latencyMs: z.int(),
});

/**
 * The fault-injection endpoints of the local fakes, behind the admin token. The API mounts them
 * only when FAULTS_ENABLED (dev/api.ts), so otherwise these paths are 404.
 */
export const FAULT_ENDPOINTS: Endpoint<{ faults: FakeFaults }>[] = [
  handled(
    contract({
      method: 'put',
      path: '/admin/faults/:service',
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
    }),
    async ({ params: { service }, body }, { faults }) => faults.set(service, body),
  ),
  handled(
    contract({
      method: 'delete',
      path: '/admin/faults/:service',
      summary: 'Heal a local fake',
      access: 'operator',
      devOnly: true,
      params: FaultServiceParam,
      success: { status: 204, description: 'the fake is healthy' },
      errors: [],
    }),
    async ({ params: { service } }, { faults }) => {
      await faults.clear(service);
    },
  ),
];
