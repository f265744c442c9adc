import { z } from 'zod';
import { ConfigError, duration, positiveDuration } from './env.js';

/**
 * The order events' webhooks (docs/operations.md, "Webhooks"). graphile-worker waits
 * e^min(attempt, 10) seconds after a failed attempt: about 3.6 hours over the first nine, then about
 * 6.1 hours each, so 21 attempts span about 2.95 days before a delivery is DEAD.
 */
export const WebhooksSchema = z.object({
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(21),
  WEBHOOK_TIMEOUT: z.string().trim().min(1).default('10s'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
  WEBHOOK_PARALLEL_PER_ENDPOINT: z.coerce.number().int().min(1).max(100).default(2),
  WEBHOOK_POLL_INTERVAL: z.string().trim().min(1).default('2s'),
  WEBHOOK_SECRET_OVERLAP: z.string().trim().min(1).default('24h'),
  WEBHOOK_ALLOW_HTTP_LOOPBACK: z.enum(['true', 'false']).optional(),
  JOB_QUEUE_STALE_LOCK: z.string().trim().min(1).default('5m'),
});

export interface WebhookSettings {
  /** Attempts of one delivery, the first included, before it is DEAD. */
  maxAttempts: number;
  /** How long one attempt waits for the endpoint's answer. */
  timeoutMs: number;
  /** Deliveries (and fan-outs) running at once in one worker process. */
  concurrency: number;
  /**
   * Deliveries to one endpoint running at once (per worker process, at most): a slow or dead
   * endpoint holds no more job slots than this, the others keep the rest.
   */
  parallelPerEndpoint: number;
  /** How often the worker looks for retries that became due. */
  pollIntervalMs: number;
  /** How long a rotated-out secret keeps signing beside the new one. */
  secretOverlapMs: number;
  /** Whether an endpoint may be plain http to a loopback host (a receiver on this machine). */
  allowHttpLoopback: boolean;
  /** A job of the queue locked longer than this belongs to a worker that died: another takes it over. */
  staleLockMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  maxAttempts: 21,
  timeoutMs: 10_000,
  concurrency: 8,
  parallelPerEndpoint: 2,
  pollIntervalMs: 2_000,
  secretOverlapMs: 24 * 3_600_000,
  allowHttpLoopback: false,
  staleLockMs: 5 * 60_000,
};

export function webhookSettings(e: z.infer<typeof WebhooksSchema>, embedded: boolean): WebhookSettings {
  const secretOverlapMs = duration('WEBHOOK_SECRET_OVERLAP', e.WEBHOOK_SECRET_OVERLAP);
  if (secretOverlapMs > 30 * 86_400_000) throw new ConfigError('WEBHOOK_SECRET_OVERLAP: must be at most 30 days');
  const timeoutMs = positiveDuration('WEBHOOK_TIMEOUT', e.WEBHOOK_TIMEOUT);
  const staleLockMs = duration('JOB_QUEUE_STALE_LOCK', e.JOB_QUEUE_STALE_LOCK);
  // A send holds its job's lock for up to WEBHOOK_TIMEOUT: a live one must never look stale.
  if (staleLockMs < Math.max(60_000, 3 * timeoutMs))
    throw new ConfigError('JOB_QUEUE_STALE_LOCK: must be at least 1m and 3 times WEBHOOK_TIMEOUT');
  return {
    maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
    timeoutMs,
    concurrency: e.WEBHOOK_CONCURRENCY,
    parallelPerEndpoint: e.WEBHOOK_PARALLEL_PER_ENDPOINT,
    pollIntervalMs: positiveDuration('WEBHOOK_POLL_INTERVAL', e.WEBHOOK_POLL_INTERVAL),
    secretOverlapMs,
    // npm start's stack lets a receiver on this machine listen on plain http; elsewhere only if asked.
    allowHttpLoopback: (e.WEBHOOK_ALLOW_HTTP_LOOPBACK ?? String(embedded)) === 'true',
    staleLockMs,
  };
}
