import { once } from 'node:events';
import net from 'node:net';
import { expect, it } from 'vitest';
import { createHttpServer, SERVER_TIMEOUTS } from '../../api/http-server.js';

/** A client that trickles its request is cut off by the server's own bounds, not held forever. */
it('closes a connection whose headers never finish, within the headers timeout', async () => {
  const timeouts = { ...SERVER_TIMEOUTS, headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 100 };
  const server = createHttpServer((_req, res) => res.end('ok'), timeouts);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    const started = Date.now();
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: '); // and nothing more
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    await once(socket, 'close');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  } finally {
    server.close();
  }
});
