import {
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import type { CustomerTokenSettings } from '../lib/config/auth.js';
import { CustomerId } from './schemas.js';

/** A customer's bearer token that proves nothing: malformed, forged, expired, unsigned, or for someone else. */
export class InvalidCustomerToken extends Error {
  constructor(
    message: string,
    /**
     * Signed by the issuer, but past its `exp` or the age limit: the customer's own token grown old,
     * not a guess (jose checks the signature before the claims).
     */
    readonly expired = false,
  ) {
    super(message);
  }
}

/** Verifies a customer's JWT and returns its `sub`, the customer id. */
export type VerifyCustomerToken = (token: string) => Promise<string>;

/** The token's own faults (401). Anything else, e.g. an unreachable JWKS endpoint, is ours (500). */
const TOKEN_FAULTS = [
  errors.JWSInvalid,
  errors.JWTInvalid,
  errors.JWSSignatureVerificationFailed,
  errors.JWTExpired,
  errors.JWTClaimValidationFailed,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys,
];

/**
 * The `typ` of an access token, where the issuer states one: a JWT (RFC 7519) or an OAuth access
 * token (RFC 9068). Other kinds a provider signs with the same keys (logout tokens, DPoP proofs …)
 * prove no customer's call.
 */
const ACCESS_TOKEN_TYPES = ['jwt', 'at+jwt'];

export function customerTokenVerifier(settings: CustomerTokenSettings): VerifyCustomerToken {
  const options: JWTVerifyOptions = {
    // One algorithm per deployment: `alg: none`, and an HS256 token signed with the provider's public
    // key (algorithm confusion), are refused by this allow-list before any signature is checked.
    algorithms: [settings.algorithm],
    requiredClaims: ['sub', 'exp'], // a token without an expiry would be a password that never changes
    clockTolerance: 5, // seconds: the issuer's clock is another machine's
    maxTokenAge: settings.maxAgeSeconds, // bounds what a leaked token is worth, whatever its `exp`
    ...(settings.issuer === undefined ? {} : { issuer: settings.issuer }),
    ...(settings.audience === undefined ? {} : { audience: settings.audience }),
  };
  let verify: (token: string) => Promise<{ payload: JWTPayload; protectedHeader: JWTHeaderParameters }>;
  if (settings.algorithm === 'HS256') {
    const secret = new TextEncoder().encode(settings.secret);
    verify = (token) => jwtVerify(token, secret, options);
  } else {
    const jwks = createRemoteJWKSet(new URL(settings.jwksUrl)); // fetched when needed, cached, refetched for an unknown `kid`
    verify = (token) => jwtVerify(token, jwks, options);
  }

  return async (token) => {
    let payload: JWTPayload;
    let typ: unknown;
    try {
      ({
        payload,
        protectedHeader: { typ },
      } = await verify(token));
    } catch (err) {
      if (TOKEN_FAULTS.some((fault) => err instanceof fault))
        throw new InvalidCustomerToken((err as errors.JOSEError).code, err instanceof errors.JWTExpired);
      throw err;
    }
    // The header is the issuer's JSON: a `typ` that is not a string is as wrong as a wrong one.
    if (
      typ !== undefined &&
      (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.includes(typ.toLowerCase().replace(/^application\//, '')))
    )
      throw new InvalidCustomerToken('typ is not an access token');
    // A customer id as a request may name it, and exactly so: nothing for the schema to trim.
    if (typeof payload.sub !== 'string' || CustomerId.safeParse(payload.sub).data !== payload.sub)
      throw new InvalidCustomerToken('sub is not a customer id');
    return payload.sub;
  };
}
