import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { findFreePort } from '../../dev/ports.js';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { eventually } from './eventually.js';
import type { OrderHarness } from './order-harness.js';
import { SERVICE_SECRETS } from './service-secrets.js';

/**
 * The worker in a process of its own, as the local stack runs it (dev/worker.ts: the service's worker
 * with the fakes handed in), for a harness started with `inProcessWorker: false`.
 */
export interface WorkerProcess {
  child: ChildProcess;
  /** Its JSON log lines so far. */
  lines: string[];
  /** Its /metrics. */
  metricsUrl: string;
  /** Kills it, if it still runs. */
  stop(): Promise<void>;
}

/**
 * Starts the worker on the harness's database and Temporal Server, with the fakes as third parties,
 * configured by the environment alone (`env` adds to it), and returns once it has started. Whatever
 * `env` leaves unset is the service's default, as in production.
 */
export async function startWorkerProcess(
  h: OrderHarness,
  taskQueue: string,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  const [metricsPort, sdkPort] = [await findFreePort(), await findFreePort()];
  const child = spawn(process.execPath, ['--import', 'tsx', 'dev/worker.ts'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...SERVICE_SECRETS,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      THIRD_PARTIES: 'fake',
      TEMPORAL_SET_CURRENT_VERSION: 'true',
      WORKER_METRICS_PORT: String(metricsPort),
      TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}`,
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  const lines: string[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    lines.push(...complete.filter((l) => l.trim() !== ''));
  });
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  try {
    await eventually(async () => lines.some((l) => l.includes('"worker started"')), 90_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, lines, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, stop };
}
