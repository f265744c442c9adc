/**
 * The token of `Authorization: Bearer <token>`; undefined when the header is missing or names another
 * scheme. RFC 7235 §2.1 makes the scheme case-insensitive and lets one or more spaces follow it, so
 * `bearer <token>` carries the same credentials: refusing it would answer a client's valid token 401
 * and count it against its address (api/auth-throttle.ts). Both the credential checks and the 401's
 * challenge read the header with this one rule.
 */
export function bearerTokenOf(authorization: string | undefined): string | undefined {
  return /^bearer +(.+)$/i.exec(authorization ?? '')?.[1];
}
