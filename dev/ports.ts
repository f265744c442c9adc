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
      throw new StartupError(`port ${port} (${use}) is already in use; stop whatever listens there or choose another port`);
    }
  }
}

/** A port the OS just handed out; tests use it for servers they start themselves. */
export async function findFreePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
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
