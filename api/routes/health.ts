import type { ApiHandler } from '../endpoint-table.js';
import { Reply } from '../endpoint.js';
import type { HealthCheck } from '../health-check.js';

/** 200 when both dependencies answer, 503 naming the ones that do not (api/health-check.ts says how fresh). */
export const health: ApiHandler<'health', { healthCheck: HealthCheck }> = async (_input, { healthCheck }) => {
  const body = await healthCheck();
  return body.db === 'ok' && body.temporal === 'ok' ? body : new Reply(body, { status: 503 });
};
