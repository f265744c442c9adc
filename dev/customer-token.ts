import { SignJWT } from 'jose';

/**
 * A customer's bearer token as the service accepts it with CUSTOMER_JWT_SECRET (HS256, `sub` =
 * customer id, with an expiry): for `npm run token`, the tests and the load generators. In
 * production an identity provider issues them; the service only verifies (api/customer-token.ts).
 */
export function signCustomerToken(
  secret: string,
  customerId: string,
  { expiresInMs = 60 * 60_000, now = Date.now() } = {},
): Promise<string> {
  return new SignJWT()
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(customerId)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor((now + expiresInMs) / 1000))
    .sign(new TextEncoder().encode(secret));
}
