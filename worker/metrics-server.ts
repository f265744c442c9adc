import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Registry } from 'prom-client';
import { scraperTokenCheck } from '../lib/bearer-tokens.js';

/**
 * The worker's GET /metrics: its own business metrics followed by the Temporal SDK's (Core's
 * Prometheus exporter, bound to a loopback address), so each replica is one scrape target. It takes
 * the API's scraper credentials (METRICS_TOKEN, or the admin token): the figures are the business's,
 * and the port may be reachable from more than Prometheus.
 */
export async function startMetricsServer(options: {
  port: number;
  host: string;
  registry: Registry;
  sdkMetricsAddress: string;
  adminToken: string;
  metricsToken: string | undefined;
}): Promise<Server> {
  const mayScrape = scraperTokenCheck(options);
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      sendError(res, 404, 'NOT_FOUND', 'only GET /metrics here');
      return;
    }
    if (!mayScrape(req.headers.authorization)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="order-lifecycle"');
      sendError(res, 401, 'UNAUTHORIZED', 'this call needs the metrics bearer token (or the admin token)');
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

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code, message } }));
}

async function sdkMetrics(address: string): Promise<string> {
  try {
    const res = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? await res.text() : `# Temporal SDK metrics unavailable: HTTP ${res.status}\n`;
  } catch (err) {
    return `# Temporal SDK metrics unavailable: ${(err as Error).message}\n`;
  }
}
