import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { findFreeLowPort, findFreePort, holdPort, LOW_PORTS } from '../../dev/ports.js';

async function listen(port: number): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return server;
}

async function close(server: net.Server): Promise<void> {
  await new Promise((resolve) => server.close(resolve));
}

describe('findFreePort', () => {
  // The chaos stack picks its ports (Temporal's services, the API) before the processes bind them.
  // Ports plainly released (listen, close) were handed out again 81 times in the same kind of loop
  // (200 ports, 3,000 binds) on the development machine; reserved ones never.
  it('keeps its ports from listen(0) for a while, yet an explicit bind still gets them', async () => {
    const reserved = new Set<number>();
    for (let i = 0; i < 100; i++) reserved.add(await findFreePort());

    let handedOutAgain = 0;
    for (let i = 0; i < 2_000; i++) {
      const server = await listen(0);
      if (reserved.has((server.address() as net.AddressInfo).port)) handedOutAgain++;
      await close(server);
    }
    expect(handedOutAgain).toBe(0);

    const [port] = reserved;
    const server = await listen(port!);
    expect((server.address() as net.AddressInfo).port).toBe(port);
    await close(server);
  });
});

describe('findFreeLowPort', () => {
  // Temporal's membership ports on PostgreSQL: they must not land on the bench's fixed block
  // (--port-base, at least LOW_PORTS.end), where one once took a worker's metrics port.
  it('picks below the fixed ports the bench takes', async () => {
    for (let i = 0; i < 200; i++) {
      const port = await findFreeLowPort();
      expect(port).toBeGreaterThanOrEqual(LOW_PORTS.start);
      expect(port).toBeLessThan(LOW_PORTS.end);
    }
  });

  // A server's membership ports are picked one after another and bound later: one port twice
  // would fail its start. At random, 500 picks from 10,000 ports repeat one with odds above 99.9 %.
  it('never hands out a port twice', async () => {
    const picked: number[] = [];
    for (let i = 0; i < 500; i++) picked.push(await findFreeLowPort());
    expect(new Set(picked).size).toBe(picked.length);
  });
});

describe('holdPort', () => {
  // A stopped cluster service's peers redial its ports all the time; holding them must not wait on
  // one of those connections (it did: the chaos run's history SIGKILL hung there).
  it('holds a port that another client keeps dialling', async () => {
    const port = await findFreeLowPort();
    let refused = 0;
    const dialler = setInterval(() => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.on('error', () => undefined).on('close', () => refused++);
    }, 1);
    try {
      for (let i = 0; i < 50; i++) expect(await holdPort(port)).toBe(port);
    } finally {
      clearInterval(dialler);
    }
    expect(refused).toBeGreaterThan(0);
  }, 10_000);
});
