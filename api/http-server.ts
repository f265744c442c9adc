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
  const listener = hostRequired(app);
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      // Node's own check answers 400 with an empty body; hostRequired answers it as the contract says.
      requireHostHeader: false,
    },
    listener,
  );
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  // An Expect other than 100-continue: Node would answer 417 with an empty body. RFC 9110 §10.1.1
  // lets a server ignore an expectation it does not know, so the request is served as any other.
  server.on('checkExpectation', listener);
  return server;
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without `Host` is answered 400, here with the contract's JSON
 * error rather than Node's empty body.
 */
function hostRequired(app: RequestListener): RequestListener {
  return (req, res) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      const body = errorBody('VALIDATION_FAILED', 'an HTTP/1.1 request needs a Host header');
      res.writeHead(ERRORS.VALIDATION_FAILED.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      res.end(body);
      return;
    }
    app(req, res);
  };
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
