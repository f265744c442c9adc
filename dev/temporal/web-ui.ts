import { join } from 'node:path';
import { logTail } from '../log-tail.js';
import { startProcess, type ManagedProcess } from '../managed-process.js';
import { PROJECT_ROOT } from '../paths.js';
import { waitForPort } from '../ports.js';
import { StartupError } from '../startup-error.js';

export interface WebUiOptions {
  uiServer: string;
  port: number;
  temporalAddress: string;
  namespace: string;
  /**
   * The API's codec endpoints (`http://localhost:3000/codec`): the browser sends them the payloads it
   * shows, with its cookies, so an operator signed in on the orders page reads them decrypted. None:
   * the Web UI shows payloads as they are stored.
   */
  codecEndpoint?: string | undefined;
  logFile: string;
}

/** The Temporal Web UI server with config/ui/development.yaml, rendered from the environment given here. */
export async function startWebUi(options: WebUiOptions): Promise<ManagedProcess> {
  const ui = startProcess({
    name: 'Temporal Web UI',
    command: options.uiServer,
    args: ['-r', join(PROJECT_ROOT, 'dev', 'temporal', 'config'), '-c', 'ui', '-e', 'development', 'start'],
    env: {
      PATH: process.env.PATH,
      TEMPORAL_GRPC_ADDRESS: options.temporalAddress,
      UI_PORT: String(options.port),
      UI_ORIGIN: `http://localhost:${options.port}`,
      NAMESPACE: options.namespace,
      CODEC_ENDPOINT: options.codecEndpoint ?? '',
    },
    logFile: options.logFile,
  });
  if (!(await waitForPort('127.0.0.1', options.port, 30_000))) {
    await ui.stop();
    throw new StartupError(`the Temporal Web UI did not open port ${options.port}; ${await logTail(options.logFile)}`);
  }
  return ui;
}
