import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { Registry } from 'prom-client';

/**
 * The worker's GET /metrics: its own business metrics followed by the Temporal SDK's (Core's
 * Prometheus exporter, bound to a loopback address), so each replica is one scrape target.
 */
export async function startMetricsServer(options: {
  port: number;
  host: string;
  registry: Registry;
  sdkMetricsAddress: string;
}): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"code":"NOT_FOUND","message":"only GET /metrics here"}}');
      return;
    }
    void Promise.all([options.registry.metrics(), sdkMetrics(options.sdkMetricsAddress)]).then(
      ([own, sdk]) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(`${own}\n${sdk}`),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  return server;
}

async function sdkMetrics(address: string): Promise<string> {
  try {
    const res = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? await res.text() : `# Temporal SDK metrics unavailable: HTTP ${res.status}\n`;
  } catch (err) {
    return `# Temporal SDK metrics unavailable: ${(err as Error).message}\n`;
  }
}
