import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { z } from 'zod';
import { ConfigError, nonEmpty } from './env.js';

/** The Worker Deployment the workers are builds of, unless TEMPORAL_DEPLOYMENT_NAME says otherwise. */
export const DEFAULT_DEPLOYMENT_NAME = 'order-lifecycle';

export const TemporalSchema = z.object({
  TEMPORAL_ADDRESS: nonEmpty.optional(),
  TEMPORAL_NAMESPACE: nonEmpty.default('default'),
  TEMPORAL_TASK_QUEUE: nonEmpty.default('orders'),
  // Additions (docs/architecture.md, "Rolling out a workflow change"): Worker Versioning.
  TEMPORAL_DEPLOYMENT_NAME: nonEmpty.default(DEFAULT_DEPLOYMENT_NAME),
  TEMPORAL_SET_CURRENT_VERSION: z.enum(['true', 'false']).default('false'),
  TEMPORAL_UI_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .default('http://localhost:8233'),
});

export interface TemporalSettings {
  /** Unset: the runner starts the embedded Temporal Server 1.32 and passes its address on. */
  address: string | undefined;
  namespace: string;
  taskQueue: string;
  /** The Worker Deployment every worker is a build of; the build id comes from its workflow code. */
  deploymentName: string;
  /**
   * Whether the worker makes its own build the deployment's current version once it polls.
   * `npm start` and the local stacks, which run one build, say yes; a production deploy decides
   * when to switch as a step of its own, and an old worker restarting must not switch back.
   */
  setCurrentVersion: boolean;
  /**
   * TLS, API key and gRPC metadata for TEMPORAL_ADDRESS, from the SDK's environment configuration
   * (TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE): Temporal Cloud.
   */
  connection: TemporalConnectionSecurity;
  /** Base URL of the Temporal Web UI, for links from the orders page. */
  uiUrl: string;
}

export type TemporalConnectionSecurity = Pick<NativeConnectionOptions, 'tls' | 'apiKey' | 'metadata'>;

/** `env` is the whole environment: the SDK's own TEMPORAL_* variables are read from it too. */
export function temporalSettings(e: z.infer<typeof TemporalSchema>, env: NodeJS.ProcessEnv): TemporalSettings {
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    deploymentName: e.TEMPORAL_DEPLOYMENT_NAME,
    setCurrentVersion: e.TEMPORAL_SET_CURRENT_VERSION === 'true',
    connection: e.TEMPORAL_ADDRESS === undefined ? {} : temporalSecurity(env),
    uiUrl: e.TEMPORAL_UI_URL.replace(/\/+$/, ''),
  };
}

/**
 * The worker's and the API's first connection to TEMPORAL_ADDRESS failed: one line naming the
 * variable and the cause, for start-up to stop with.
 */
export function temporalUnreachable(address: string, err: unknown): ConfigError {
  const cause = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return new ConfigError(
    `TEMPORAL_ADDRESS: cannot connect to Temporal at ${address} (${cause}); check that it runs and is reachable from here`,
  );
}

/** The SDK's own loader, fed this environment (not process.env behind our back). */
function temporalSecurity(env: NodeJS.ProcessEnv): TemporalConnectionSecurity {
  try {
    const defined = Object.fromEntries(
      Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined && kv[1] !== ''),
    );
    const { tls, apiKey, metadata } = loadClientConnectConfig({ overrideEnvVars: defined }).connectionOptions;
    return { tls, apiKey, metadata };
  } catch (err) {
    throw new ConfigError(`TEMPORAL_* environment configuration: ${(err as Error).message}`);
  }
}
