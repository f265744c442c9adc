import { z } from 'zod';
import type { Handler } from '../../api/endpoint.js';
import { FAKE_SERVICES, type FakeFaults } from './faults.js';

export const FaultServiceParam = z.object({ service: z.enum(FAKE_SERVICES) });

export const FaultBody = z.strictObject({
  failNext: z.number().int().min(0).max(1_000_000).optional(),
  failAlways: z.boolean().optional(),
  latencyMs: z.number().int().min(0).max(120_000).optional(),
});

export const FaultState = z.strictObject({
  service: FaultServiceParam.shape.service,
  failNext: z.int(),
  failAlways: z.boolean(),
  latencyMs: z.int(),
});

/** Failure injection for the local fakes (./fault-endpoints.ts declares who may call and how). */
export const setFaults: Handler<
  { params: typeof FaultServiceParam; body: typeof FaultBody },
  'operator',
  { faults: FakeFaults },
  typeof FaultState
> = async ({ params: { service }, body }, { faults }) => faults.set(service, body);

export const clearFaults: Handler<{ params: typeof FaultServiceParam }, 'operator', { faults: FakeFaults }> = async (
  { params: { service } },
  { faults },
) => {
  await faults.clear(service);
};
