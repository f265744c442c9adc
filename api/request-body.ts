import express, { type RequestHandler } from 'express';
import { ApiError } from './errors.js';

/**
 * The request body parsers. Each runs after the caller's credentials are checked: an
 * unauthenticated caller learns nothing about what a body should look like, it gets 401 whatever
 * it sent. The webhook's credentials are in its body, so there the raw bytes come first.
 */
export const JSON_BODY_LIMIT_KB = 64;
export const WEBHOOK_BODY_LIMIT_KB = 16;
/** The codec endpoints': every payload of what the Web UI shows at once, a few up to Temporal's 2 MB blob limit. */
export const CODEC_BODY_LIMIT_KB = 4 * 1024;

export const jsonBody = jsonBodyUpTo(JSON_BODY_LIMIT_KB);

/** A JSON body parser with a limit of its own: the codec endpoints take a history's payloads at once. */
export function jsonBodyUpTo(limitKb: number): RequestHandler {
  return express.json({ limit: `${limitKb}kb`, strict: true });
}

/** The exact bytes sent, whatever the content type: the webhook's signature covers them. */
export const rawBody = express.raw({ type: () => true, limit: `${WEBHOOK_BODY_LIMIT_KB}kb` });

/** A raw body read by rawBody, parsed as JSON (once its signature holds). */
export const jsonOfRawBody: RequestHandler = (req, _res, next) => {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  try {
    req.body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError('VALIDATION_FAILED', 'the request body is not valid JSON');
  }
  next();
};
