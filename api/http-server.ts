import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERRORS, errorBody, type ErrorCode } from './errors.js';

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
  server.on('clientError', answerClientError);
  return server;
}

/**
 * What Node refuses before the app sees a request (a timeout, headers too large, a request that is
 * not HTTP) it answers with an empty body; the contract says every error is JSON, so it is here.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // Nobody to answer: the client went away.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'REQUEST_TIMEOUT'
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? 'HEADERS_TOO_LARGE'
        : 'VALIDATION_FAILED';
  const message = code === 'VALIDATION_FAILED' ? 'the request is not valid HTTP' : undefined;
  const body = errorBody(code, message);
  const { status } = ERRORS[code];
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
