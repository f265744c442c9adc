import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { OperatorSessionSettings } from '../lib/config/auth.js';
import { CredentialRefused, type Caller } from './auth.js';

/**
 * The operators' session (docs/api.md, "The operator session"): the orders page posts the admin
 * token once (`POST /operator/session`) and gets this cookie instead, so the browser never keeps the
 * token; the Temporal Web UI sends the same cookie to the codec endpoints. Nothing is stored on the
 * server: the cookie is its expiry and an HMAC of it, under a key derived from ADMIN_TOKEN, so
 * changing the admin token ends every session, and every API process accepts the others' cookies.
 */
export const SESSION_COOKIE = 'operator_session';

const FORMAT = 'v1';
/** Methods that change nothing: a cookie alone may make them. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** What a request's cookie says. `none`: it sent none, and another credential must decide. */
export type SessionState = 'none' | 'valid' | 'expired' | 'forged';

export interface OperatorSessions {
  /** A new session from now: the `Set-Cookie` value and when it ends. */
  issue(nowMs: number): { setCookie: string; expiresAt: Date };
  /** The `Set-Cookie` value that removes the cookie (signing out). */
  readonly clear: string;
  /** What the `Cookie` header's session says at `nowMs`. */
  check(cookieHeader: string | undefined, nowMs: number): SessionState;
}

export function operatorSessions(adminToken: string, settings: OperatorSessionSettings): OperatorSessions {
  // A key of its own, not the token itself: the cookie's MAC never doubles as anything the token opens.
  const key = Buffer.from(hkdfSync('sha256', adminToken, '', 'order-lifecycle operator session', 32));
  const mac = (expiresAtSeconds: string) =>
    createHmac('sha256', key).update(`${FORMAT}.${expiresAtSeconds}`).digest('base64url');
  // HttpOnly: the page's script cannot read it. SameSite=Strict: no other site's page makes the browser
  // send it. Secure everywhere but npm start's plain-http loopback stack.
  const attributes = `Path=/; HttpOnly; SameSite=Strict${settings.secureCookie ? '; Secure' : ''}`;
  return {
    issue(nowMs) {
      const expiresAtSeconds = Math.floor((nowMs + settings.ttlMs) / 1000);
      const value = `${FORMAT}.${expiresAtSeconds}.${mac(String(expiresAtSeconds))}`;
      return {
        setCookie: `${SESSION_COOKIE}=${value}; Max-Age=${Math.floor(settings.ttlMs / 1000)}; ${attributes}`,
        expiresAt: new Date(expiresAtSeconds * 1000),
      };
    },
    clear: `${SESSION_COOKIE}=; Max-Age=0; ${attributes}`,
    check(cookieHeader, nowMs) {
      const value = cookieValue(cookieHeader, SESSION_COOKIE);
      if (value === undefined || value === '') return 'none';
      const [format, expiresAtSeconds, sent, ...rest] = value.split('.');
      if (format !== FORMAT || !/^\d{1,12}$/.test(expiresAtSeconds ?? '') || sent === undefined || rest.length > 0)
        return 'forged';
      const expected = Buffer.from(mac(expiresAtSeconds!));
      const given = Buffer.from(sent);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
      return Number(expiresAtSeconds) * 1000 > nowMs ? 'valid' : 'expired';
    },
  };
}

/**
 * An endpoint's credential check that also takes the operator session: a request with an
 * `Authorization` header is decided by `check` alone, one with only the cookie by the cookie. A
 * refused cookie is UNAUTHORIZED: a forged one is a guess of the operator's credential, which the
 * guessed-token throttle around it counts; an expired one, or one sent without the JSON rule below, is not. Against cross-site requests (CSRF): the cookie is SameSite=Strict, and a call
 * with it that is not GET or HEAD must also be `Content-Type: application/json`, which no HTML form
 * can send and which a page of another origin can send only after a CORS preflight that only the
 * Web UI's origin passes (api/cors.ts).
 */
export function orOperatorSession(check: RequestHandler, sessions: OperatorSessions): RequestHandler {
  return (req, res, next) => {
    if (req.get('authorization') !== undefined) return check(req, res, next);
    const state = sessions.check(req.get('cookie'), Date.now());
    if (state === 'none') return check(req, res, next);
    if (state === 'expired') throw new CredentialRefused(undefined, 'the operator session has expired: sign in again');
    if (state === 'forged') throw new CredentialRefused('operator', 'the operator session cookie is not valid');
    if (!SAFE_METHODS.has(req.method) && !/^application\/json\s*(;|$)/i.test(req.get('content-type') ?? ''))
      throw new CredentialRefused(
        undefined,
        'a call made with the operator session must send Content-Type: application/json',
      );
    res.locals.caller = { role: 'operator' } satisfies Caller;
    next();
  };
}

/** One cookie's value from a `Cookie` header (RFC 6265 §5.4: `name=value` pairs separated by `; `). */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
