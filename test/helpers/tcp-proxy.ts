import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A loopback TCP proxy that can cut its target off: down() drops every open connection and
 * refuses new ones, up() listens again on the same port. Put in front of PostgreSQL, it is a
 * database outage for whatever connects through it, and nothing else.
 */
export interface TcpProxy {
  port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy()); // a cut connection is the point, not a failure of the test
    }
    client.pipe(upstream).pipe(client);
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
