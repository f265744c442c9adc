import { Reply, type Handler } from '../endpoint.js';
import type { HealthCheck } from '../health-check.js';
import type { Health } from '../responses.js';

/** 200 when both dependencies answer, 503 naming the ones that do not (api/health-check.ts says how fresh). */
export const health: Handler<Record<never, never>, 'public', { healthCheck: HealthCheck }, typeof Health> = async (
  _input,
  { healthCheck },
) => {
  const body = await healthCheck();
  return body.db === 'ok' && body.temporal === 'ok' ? body : new Reply(body, { status: 503 });
};
