import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The token of `Authorization: Bearer <token>`; undefined when the header is missing or names another
 * scheme. RFC 7235 §2.1 makes the scheme case-insensitive and lets one or more spaces follow it, so
 * `bearer <token>` carries the same credentials: refusing it would answer a client's valid token 401
 * and count it against its address (api/auth-throttle.ts). The API's credential checks, its 401's
 * challenge and the worker's /metrics read the header with this one rule.
 */
export function bearerTokenOf(authorization: string | undefined): string | undefined {
  return /^bearer +(.+)$/i.exec(authorization ?? '')?.[1];
}

/**
 * Who may read `/metrics`, the API's and the worker's alike: Prometheus with `METRICS_TOKEN`, or an
 * operator with `ADMIN_TOKEN` (unset METRICS_TOKEN: the admin token alone).
 */
export function scraperTokenCheck({
  adminToken,
  metricsToken,
}: {
  adminToken: string;
  metricsToken?: string | undefined;
}): (authorization: string | undefined) => boolean {
  const isAdminToken = secretCheck(adminToken);
  const isMetricsToken = metricsToken === undefined ? () => false : secretCheck(metricsToken);
  return (authorization) => {
    const token = bearerTokenOf(authorization);
    return token !== undefined && (isMetricsToken(token) || isAdminToken(token));
  };
}

/** A constant-time comparison of a token with one secret. */
export function secretCheck(secret: string): (token: string) => boolean {
  const expected = digest(secret);
  // Comparing fixed-length digests keeps the check constant-time whatever the token's length.
  return (token) => timingSafeEqual(digest(token), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
