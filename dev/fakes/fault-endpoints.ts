import { z } from 'zod';
import type { Endpoint } from '../../api/endpoint.js';
import { FaultBody, FaultServiceParam } from './faults-router.js';

const FaultState = z.strictObject({
  service: FaultServiceParam.shape.service,
  failNext: z.int(),
  failAlways: z.boolean(),
  latencyMs: z.int(),
});

/** The OpenAPI entries of faultsRouter (./faults-router.ts): whoever mounts that router adds these to the document. */
export const FAULT_ENDPOINTS: Endpoint[] = [
  {
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
  },
  {
    method: 'delete',
    path: '/admin/faults/:service',
    summary: 'Heal a local fake',
    access: 'operator',
    devOnly: true,
    params: FaultServiceParam,
    success: { status: 204, description: 'the fake is healthy' },
    errors: [],
  },
];
