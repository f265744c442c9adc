import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { findFreePort } from '../../dev/ports.js';
import { startWebUi } from '../../dev/temporal/web-ui.js';

/**
 * The Web UI as npm start runs it (dev/temporal/config/ui/development.yaml) is read-only: operators act
 * through the service's operator endpoints. Its settings are served without Temporal, so none runs here.
 */
it("npm start's Web UI reports its write actions disabled", async () => {
  const binaries = inject('temporalServer');
  expect(binaries, 'the Temporal binaries global setup builds').not.toBeNull();
  const logDir = await mkdtemp(join(tmpdir(), 'order-lifecycle-web-ui-'));
  const port = await findFreePort();
  const ui = await startWebUi({
    uiServer: binaries!.uiServer,
    port,
    temporalAddress: '127.0.0.1:1',
    namespace: 'default',
    logFile: join(logDir, 'temporal-ui.log'),
  });
  try {
    const settings = (await (await fetch(`http://127.0.0.1:${port}/api/v1/settings`)).json()) as Record<
      string,
      unknown
    >;
    expect(settings).toMatchObject({ DisableWriteActions: true });
  } finally {
    await ui.stop();
    await rm(logDir, { recursive: true, force: true });
  }
});
