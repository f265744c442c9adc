import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A loopback TCP proxy that can cut its target off: down() drops every open connection and
 * refuses new ones, up() listens again on the same port. Put in front of PostgreSQL, it is a
 * database outage for whatever connects through it, and nothing else. With `delayMs` it holds
 * every chunk that long in each direction (in order): a database a network hop away.
 */
export interface TcpProxy {
  port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(
  target: { host: string; port: number },
  { delayMs = 0 }: { delayMs?: number } = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy()); // a cut connection is the point, not a failure of the test
    }
    if (delayMs === 0) client.pipe(upstream).pipe(client);
    else {
      delayed(client, upstream, delayMs);
      delayed(upstream, client, delayMs);
    }
  });
  const listen = async (port: number) => {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
  };
  const down = async () => {
    if (!server.listening) return;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen(0);
  const { port } = server.address() as AddressInfo;
  return { port, down, up: () => (server.listening ? Promise.resolve() : listen(port)), close: down };
}

/** `from`'s data written to `to` after `delayMs`; timers of one delay fire in the order they were set. */
function delayed(from: Socket, to: Socket, delayMs: number): void {
  from.on('data', (chunk: Buffer) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
  from.on('end', () => setTimeout(() => to.end(), delayMs));
}
