import { Router } from 'express';
import { z } from 'zod';
import { requireAdmin } from '../../api/auth.js';
import { parseInput } from '../../api/errors.js';
import { jsonBody } from '../../api/json-body.js';
import { FAKE_SERVICES, type FakeFaults } from './faults.js';

export const FaultServiceParam = z.object({ service: z.enum(FAKE_SERVICES) });

export const FaultBody = z.strictObject({
  failNext: z.number().int().min(0).max(1_000_000).optional(),
  failAlways: z.boolean().optional(),
  latencyMs: z.number().int().min(0).max(120_000).optional(),
});

/**
 * Failure injection for the local fakes, behind the admin token. The API mounts it only when
 * FAULTS_ENABLED (api/server.ts), so otherwise these paths are 404.
 */
export function faultsRouter({ faults, adminToken }: { faults: FakeFaults; adminToken: string }): Router {
  const router = Router();
  const admin = requireAdmin(adminToken);

  router.put('/admin/faults/:service', admin, jsonBody, async (req, res) => {
    const { service } = parseInput(FaultServiceParam, req.params);
    res.json(await faults.set(service, parseInput(FaultBody, req.body)));
  });

  router.delete('/admin/faults/:service', admin, async (req, res) => {
    const { service } = parseInput(FaultServiceParam, req.params);
    await faults.clear(service);
    res.status(204).end();
  });

  return router;
}
