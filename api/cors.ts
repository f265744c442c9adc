import type { RequestHandler } from 'express';

/**
 * CORS for the endpoints the Temporal Web UI calls from its own origin (the codec endpoints): that one
 * origin (CODEC_CORS_ORIGIN) may call them with the browser's cookies, the operator session; no
 * other origin gets a CORS header, so the browser keeps every other page from reading an answer or
 * sending a JSON body at all. Written out rather than taken from a package: one origin, a few headers.
 */
export interface WebUiCors {
  /** On each answer of such an endpoint, refusals included, so the Web UI can read why it was refused. */
  headers: RequestHandler;
  /** Answers a preflight (OPTIONS) from that origin for one of `methods` with 204; anything else goes on. */
  preflight(methods: readonly string[]): RequestHandler;
}

/** The headers the Web UI sends to a codec server: JSON, the namespace, and a token when it passes one. */
const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export function webUiCors(origin: string): WebUiCors {
  return {
    headers(req, res, next) {
      res.vary('Origin');
      if (req.get('origin') === origin) {
        res.set('Access-Control-Allow-Origin', origin);
        res.set('Access-Control-Allow-Credentials', 'true');
      }
      next();
    },
    preflight(methods) {
      const allowed = methods.map((m) => m.toUpperCase());
      return (req, res, next) => {
        const requested = req.get('access-control-request-method');
        if (req.method !== 'OPTIONS' || requested === undefined || req.get('origin') !== origin) return next();
        if (!allowed.includes(requested.toUpperCase())) return next();
        res.vary('Origin');
        res.set({
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Credentials': 'true',
          'Access-Control-Allow-Methods': allowed.join(', '),
          'Access-Control-Allow-Headers': ALLOWED_HEADERS,
          'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
        });
        res.status(204).end();
      };
    },
  };
}
