import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { StartupError } from './startup-error.js';

/**
 * Fails with one line if any port is in use. Binding without a host (dual-stack `::`) collides with
 * a listener on any local address, so a server on 127.0.0.1, 0.0.0.0 or ::1 is caught alike.
 */
export async function assertPortsFree(ports: readonly { port: number; use: string }[]): Promise<void> {
  for (const { port, use } of ports) {
    if (!(await isFree(port))) {
      throw new StartupError(
        `port ${port} (${use}) is already in use; stop whatever listens there or choose another port`,
      );
    }
  }
}

/**
 * A port the OS just handed out, kept from being handed out again for a minute. Linux picks
 * ephemeral ports at random, so a port released a moment ago can be the next one any process gets
 * with `listen(0)` (the Temporal dev server picks its internal ports that way) — and the caller's
 * server, started seconds later, finds it taken. Closing an accepted connection from the listening
 * side leaves that side in TIME_WAIT: `listen(0)` skips the port while it lasts (60 s), an explicit
 * bind with SO_REUSEADDR (Node, Go, PostgreSQL and Java all set it) still gets it.
 */
export function findFreePort(): Promise<number> {
  return holdPort(0);
}

/**
 * Where findFreeLowPort picks: below 20000, so that it never takes a fixed port the bench holds
 * for a later process (`--port-base`, 24000 by default and at least LOW_PORTS.end, bench/options.ts:
 * a Temporal membership port picked there once took the bench worker's metrics port).
 */
export const LOW_PORTS = { start: 10_000, end: 20_000 } as const;

/** The low ports this process handed out: a port is free again once held, so a pick must skip them. */
const lowPortsGiven = new Set<number>();

/**
 * A free port from LOW_PORTS, held like findFreePort's: for a server that stores its port in a
 * signed 16-bit column (Temporal Server's membership table on PostgreSQL), which the ports
 * listen(0) picks (32768-60999) overflow. Never one this process handed out before: a Temporal
 * server's four membership ports are picked one after another and bound only when it starts, so
 * a random pick could name one twice (a CI run's server once failed on its own ringpop port).
 */
export async function findFreeLowPort(): Promise<number> {
  let lastError: unknown;
  // A pick already handed out counts as an attempt: a used-up range ends in an error, not a spin.
  for (let attempt = 0; attempt <= 100; attempt++) {
    const candidate = LOW_PORTS.start + Math.floor(Math.random() * (LOW_PORTS.end - LOW_PORTS.start));
    if (lowPortsGiven.has(candidate)) continue;
    try {
      const port = await holdPort(candidate);
      lowPortsGiven.add(port);
      return port;
    } catch (err) {
      lastError = err;
    }
  }
  throw (
    lastError ?? new Error(`no free port in ${LOW_PORTS.start}-${LOW_PORTS.end} that this process has not handed out`)
  );
}

/**
 * The same hold for a port given (0: any free one), e.g. one a server just let go of and will bind
 * again after a pause; fails if something listens on it.
 */
export async function holdPort(wanted: number): Promise<number> {
  const server = net.createServer();
  // eslint-disable-next-line prefer-const -- read by the connection handler before it is assigned
  let client: net.Socket | undefined;
  // Peers of a stopped server keep redialling its port (a cluster's other services, gRPC clients):
  // accept only our own client's connection and refuse theirs, as the stopped server would have.
  const accepted = new Promise<net.Socket>((resolve) => {
    server.on('connection', (socket) =>
      client !== undefined && socket.remotePort === client.localPort ? resolve(socket) : socket.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(wanted, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  client = net.connect({ host: '127.0.0.1', port });
  const clientClosed = new Promise((resolve) => client.once('close', resolve).once('error', resolve));
  // The server side closes first, so it is the side left in TIME_WAIT; the client answers the FIN
  // with its own (Node's default for a socket that is not half-open).
  (await accepted).end();
  await clientClosed;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls until something accepts TCP connections on host:port, or `deadlineMs` passes. */
export async function waitForPort(host: string, port: number, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await accepts(host, port)) return true;
    await sleep(100);
  }
  return false;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
