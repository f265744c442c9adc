import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A loopback endpoint: it records every request and answers as `answer` says. */
export class Receiver {
  readonly received: Received[] = [];
  private held: ServerResponse[] = [];
  private constructor(
    private readonly server: Server,
    public answer: (n: number) => number | 'hang',
  ) {}

  static async start(answer: (n: number) => number | 'hang' = () => 204): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server, answer);
    server.on('request', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        receiver.received.push({ headers: req.headers, body, at: Date.now() });
        const status = receiver.answer(receiver.received.length);
        if (status === 'hang') receiver.held.push(res);
        else res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Each request verified with the endpoint's secret (throws on a bad signature), then each order's seqs in order. */
export function verifiedSeqsByOrder(requests: readonly Pick<Received, 'headers' | 'body'>[], secret: string) {
  const seqs = new Map<string, number[]>();
  for (const r of requests) {
    const { data } = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
      data: { orderId: string; seq: number };
    };
    seqs.set(
      data.orderId,
      [...(seqs.get(data.orderId) ?? []), data.seq].sort((a, b) => a - b),
    );
  }
  return seqs;
}
