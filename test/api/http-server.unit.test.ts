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
    expect(jsonErrorOf(answer)).toMatchObject({ error: { code: 'REQUEST_TIMEOUT' } });
  } finally {
    server.close();
  }
});

/** The body of a raw HTTP answer, parsed: the contract's error shape. */
function jsonErrorOf(answer: string): unknown {
  const [head, body] = answer.split('\r\n\r\n') as [string, string];
  expect(head.toLowerCase()).toContain('content-type: application/json');
  return JSON.parse(body);
}

it.each([
  [
    'headers too large',
    `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    431,
    'HEADERS_TOO_LARGE',
  ],
  ['not HTTP', 'HELLO THERE\r\n\r\n', 400, 'VALIDATION_FAILED'],
  ['an HTTP/1.1 request without Host', 'GET / HTTP/1.1\r\n\r\n', 400, 'VALIDATION_FAILED'],
])('what Node refuses before the app (%s) is a JSON error too', async (_, request, status, code) => {
  const answer = await rawExchange(request);
  expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(jsonErrorOf(answer)).toMatchObject({ error: { code } });
});

/** RFC 9110 §10.1.1 lets a server ignore an expectation it does not know; Node's own answer would be an empty 417. */
it('serves a request whose Expect is not 100-continue, as if it had none', async () => {
  const answer = await rawExchange(
    'GET / HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
  );
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  expect(answer.split('\r\n\r\n')[1]).toBe('ok');
});

/** Sends raw bytes to a server of createHttpServer answering "ok", and returns all it wrote back until it closed. */
async function rawExchange(request: string): Promise<string> {
  const server = createHttpServer((_req, res) => res.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write(request);
    await once(socket, 'close');
    return answer;
  } finally {
    server.close();
  }
}
