import type { ApiHandler } from '../endpoint-table.js';
import { Reply } from '../endpoint.js';
import type { OperatorSessions } from '../operator-session.js';

/**
 * Signing in and out of the orders page (api/operator-session.ts): the admin token is checked once,
 * here, and the browser keeps an HttpOnly session cookie instead of the token.
 */
export const startOperatorSession: ApiHandler<'startOperatorSession', { operatorSessions: OperatorSessions }> = async (
  _input,
  { operatorSessions },
) => {
  const { setCookie, expiresAt } = operatorSessions.issue(Date.now());
  return new Reply({ expiresAt: expiresAt.toISOString() }, { headers: { 'Set-Cookie': setCookie } });
};

/** Signing out needs no credential: it only tells the browser to drop its cookie. */
export const endOperatorSession: ApiHandler<'endOperatorSession', { operatorSessions: OperatorSessions }> = async (
  _input,
  { operatorSessions },
) => new Reply(undefined, { status: 204, headers: { 'Set-Cookie': operatorSessions.clear } });
