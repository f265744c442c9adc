import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * Bounds on how long one connection may hold the server: a client that trickles its headers or
 * its body, or keeps an idle connection open, is cut off instead of holding a socket and its memory.
 */
export const SERVER_TIMEOUTS = {
  /** The whole header block: ours are small, a slow one is an attack (slowloris). */
  headersTimeoutMs: 10_000,
  /** A whole request, body included (64 kB at most, api/request-body.ts). */
  requestTimeoutMs: 30_000,
  /**
   * An idle keep-alive connection. Longer than the 60 s idle timeout load balancers commonly use,
   * so the balancer, not this server, closes first: otherwise a request it sends on a connection
   * this server is closing fails with a 502.
   */
  keepAliveTimeoutMs: 65_000,
  /** How often Node checks the first two; its default (30 s) would let a slow client stay 3 × longer. */
  checkIntervalMs: 1_000,
};

/** The API's HTTP server with those bounds; it does not listen yet. */
export function createHttpServer(app: RequestListener, timeouts = SERVER_TIMEOUTS): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
    },
    app,
  );
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  return server;
}
