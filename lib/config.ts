import { z } from 'zod';
import { parseDuration } from './duration.js';

/**
 * The only reader of process.env. Every process (API, worker, runner) calls loadConfig() once at
 * start-up; a bad value stops start-up with a ConfigError that names the variable.
 */

/** Public development values: printed at start by the runner, never to be used in production. */
export const DEV_WEBHOOK_SECRET = 'dev-webhook-secret';
export const DEV_ADMIN_TOKEN = 'dev-admin-token';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const port = z.coerce.number().int().min(1).max(65_535);
const nonEmpty = z.string().trim().min(1);

const EnvSchema = z.object({
  PORT: port.default(3000),
  DATABASE_URL: nonEmpty.optional(),
  TEMPORAL_ADDRESS: nonEmpty.optional(),
  TEMPORAL_NAMESPACE: nonEmpty.default('default'),
  TEMPORAL_TASK_QUEUE: nonEmpty.default('orders'),
  PAYMENT_WINDOW: nonEmpty.default('30m'),
  PAYMENT_WEBHOOK_SECRET: nonEmpty.default(DEV_WEBHOOK_SECRET),
  ADMIN_TOKEN: nonEmpty.default(DEV_ADMIN_TOKEN),
  FAULTS_ENABLED: z.enum(['true', 'false']).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RECONCILE_EVERY: nonEmpty.default('2m'),
  RECONCILE_GRACE: nonEmpty.default('1m'),
});

export interface Config {
  port: number;
  /** Unset: the runner starts the embedded PostgreSQL and passes its URL on. */
  databaseUrl: string | undefined;
  temporal: {
    /** Unset: the runner starts the embedded Temporal dev server and passes its address on. */
    address: string | undefined;
    namespace: string;
    taskQueue: string;
  };
  paymentWindowMs: number;
  webhookSecret: string;
  adminToken: string;
  faultsEnabled: boolean;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  reconciliation: {
    /** How often the safety-net sweep runs. */
    everyMs: number;
    /** How far past its deadline an UNPAID order must be before the sweep considers it stranded. */
    graceMs: number;
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(blankToUndefined(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  const duration = (name: 'PAYMENT_WINDOW' | 'RECONCILE_EVERY' | 'RECONCILE_GRACE') => {
    try {
      return parseDuration(e[name]);
    } catch (err) {
      throw new ConfigError(`${name}: ${(err as Error).message}`);
    }
  };
  const embedded = e.DATABASE_URL === undefined && e.TEMPORAL_ADDRESS === undefined;
  return {
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, taskQueue: e.TEMPORAL_TASK_QUEUE },
    paymentWindowMs: duration('PAYMENT_WINDOW'),
    webhookSecret: e.PAYMENT_WEBHOOK_SECRET,
    adminToken: e.ADMIN_TOKEN,
    // Contract: on by default only under the fully embedded stack, where nothing real is at stake.
    faultsEnabled: e.FAULTS_ENABLED === undefined ? embedded : e.FAULTS_ENABLED === 'true',
    logLevel: e.LOG_LEVEL,
    reconciliation: { everyMs: duration('RECONCILE_EVERY'), graceMs: duration('RECONCILE_GRACE') },
  };
}

/** `FOO=` in a shell or compose file means "not set", not "set to the empty string". */
function blankToUndefined(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' ? undefined : v]));
}
