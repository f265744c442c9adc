import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerDeploymentOptions } from '@temporalio/worker';

/**
 * The service's Worker Deployment (docs/architecture.md, "Rolling out a workflow change"): every
 * worker is a build of one deployment, its build id is derived from the workflow code it runs, and
 * every workflow run stays on the build that started it (PINNED) until it closes.
 */

/**
 * The build id of a workflow bundle: the first 16 hex digits of the SHA-256 of its code. Any change
 * to the code the workers run (a workflow, what it imports, the SDK) is a new build; anything else
 * (activities, the API, configuration, where the bundle was made) keeps the id, so such changes can
 * replace workers in place. For the compiled service it is the id of `dist/workflow-bundle.js`
 * (`workflow-bundle.traced.js` for workers with tracing on), known before deploying: `npm run build`
 * prints both.
 */
export function buildIdOf(workflowBundle: string): string {
  return createHash('sha256').update(withoutSourceMap(workflowBundle), 'utf8').digest('hex').slice(0, 16);
}

/**
 * The code alone: the SDK's inline source map, the bundle's last line, names every file by its
 * absolute path on the machine that bundled it, so CI's checkout and the image's /app would be two
 * builds of the same code.
 */
function withoutSourceMap(bundle: string): string {
  const sourceMap = bundle.lastIndexOf(SOURCE_MAP_COMMENT);
  return sourceMap === -1 ? bundle : bundle.slice(0, sourceMap);
}

const SOURCE_MAP_COMMENT = '//# sourceMappingURL=';

/** A versioned worker of `deploymentName`: the build of `workflowCode`, its workflows PINNED. */
export function pinnedDeployment(deploymentName: string, workflowCode: string): WorkerDeploymentOptions {
  return {
    useWorkerVersioning: true,
    version: { deploymentName, buildId: buildIdOf(workflowCode) },
    defaultVersioningBehavior: 'PINNED',
  };
}

/** What the server answers while no worker of the version (or of the deployment) has polled yet. */
const NOT_YET_POLLED = new Set([5 /* NOT_FOUND */, 9 /* FAILED_PRECONDITION */]);

/**
 * Makes `version` its deployment's current version: new workflow runs start on it, and runs
 * pinned to other builds stay where they are. The server knows a version only once one of its
 * workers has polled, so this retries until then, for up to `timeoutMs`. Setting the version that
 * is already current changes nothing. undefined: `signal` aborted first (the worker stopped).
 */
export async function setCurrentVersion(
  client: Client,
  version: WorkerDeploymentVersion,
  { timeoutMs = 60_000, identity, signal }: { timeoutMs?: number; identity?: string; signal?: AbortSignal } = {},
): Promise<{ previousBuildId: string | undefined } | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (!signal?.aborted) {
    try {
      const response = await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        ...(identity === undefined ? {} : { identity }),
      });
      return { previousBuildId: response.previousDeploymentVersion?.buildId || undefined };
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === undefined || !NOT_YET_POLLED.has(code) || Date.now() >= deadline) throw err;
      await sleep(250, undefined, { signal }).catch(() => undefined);
    }
  }
  return undefined;
}
