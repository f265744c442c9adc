import { once } from 'node:events';
import type { Server } from 'node:http';

/**
 * Stops accepting connections at once and lets the requests in flight finish: idle keep-alive
 * connections are closed as soon as they become idle. Whatever is still running after `graceMs`
 * is cut off, so a stop never hangs on a stuck client.
 */
export async function closeGracefully(server: Server, graceMs: number): Promise<'drained' | 'forced'> {
  const closed = once(server, 'close');
  server.close();
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'forced'>((resolve) => (timer = setTimeout(resolve, graceMs, 'forced')));
  const outcome = await Promise.race([closed.then(() => 'drained' as const), deadline]);
  clearInterval(sweep);
  clearTimeout(timer);
  if (outcome === 'forced') {
    server.closeAllConnections();
    await closed;
  }
  return outcome;
}
