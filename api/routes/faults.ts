import { Router } from 'express';
import type { FakeFaults } from '../../activities/third-party/faults.js';
import { requireAdmin } from '../auth.js';
import { parseInput } from '../errors.js';
import { jsonBody } from '../json-body.js';
import { FaultBody, FaultServiceParam } from '../schemas.js';

/** Failure injection for the local fakes; mounted only when FAULTS_ENABLED, so otherwise these are 404. */
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
