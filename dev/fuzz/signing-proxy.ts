import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAYMENT_CALLBACK_PATH, SIGNATURE_HEADER, signPayload, TIMESTAMP_HEADER } from '../../api/webhook-signature.js';

/**
 * A loopback proxy in front of the API that signs what it forwards to the payment webhook, as the
 * provider would, so that the fuzzer's webhook bodies get past the signature and reach the
 * webhook's own validation and hand-over. A callback without the signature headers passes unsigned,
 * so that leaving them out is still refused. Every other request passes through untouched, whatever
 * its method.
 */
export async function startSigningProxy(apiUrl: string, webhookSecret: string): Promise<{ url: string; stop(): void }> {
  const target = new URL(apiUrl);
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const headers: OutgoingHttpHeaders = { ...req.headers, host: target.host, 'content-length': body.length };
      if (req.method === 'POST' && req.url === PAYMENT_CALLBACK_PATH && carriesSignature(req)) {
        // Over the raw bytes, as the webhook verifies them.
        const timestamp = Math.floor(Date.now() / 1000);
        headers[TIMESTAMP_HEADER.toLowerCase()] = String(timestamp);
        headers[SIGNATURE_HEADER.toLowerCase()] = signPayload(webhookSecret, timestamp, body);
      }
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.once('error', (err) =>
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${err.message}`),
      );
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stop: () => server.close() };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function carriesSignature(req: IncomingMessage): boolean {
  return [TIMESTAMP_HEADER, SIGNATURE_HEADER].every((name) => Boolean(req.headers[name.toLowerCase()]));
}
