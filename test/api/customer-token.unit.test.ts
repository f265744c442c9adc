import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerTokenVerifier, InvalidCustomerToken } from '../../api/customer-token.js';
import { signCustomerToken } from '../../dev/customer-token.js';

/** The verifier alone: which tokens prove a customer, and which prove nothing (the API answers those 401). */
const SECRET = 'a-customer-jwt-secret-of-32-chars!!';
const MAX_AGE_SECONDS = 3600;
const hs256 = customerTokenVerifier({ algorithm: 'HS256', secret: SECRET, maxAgeSeconds: MAX_AGE_SECONDS });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

async function expectRefused(verify: (token: string) => Promise<string>, token: string) {
  await expect(verify(token)).rejects.toBeInstanceOf(InvalidCustomerToken);
}

describe('HS256 with CUSTOMER_JWT_SECRET', () => {
  it('accepts a token signed with the secret and answers its sub', async () => {
    expect(await hs256(await signCustomerToken(SECRET, 'alice'))).toBe('alice');
  });

  it('refuses forged, expired, unsigned (alg: none), expiry-less and malformed tokens', async () => {
    await expectRefused(hs256, await signCustomerToken('another-secret-that-is-long-enough!', 'alice'));
    await expectRefused(
      hs256,
      await signCustomerToken(SECRET, 'alice', { now: Date.now() - 2 * 3600_000, expiresInMs: 3600_000 }),
    );
    await expectRefused(hs256, `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'alice', exp: inAnHour() })}.`);
    const genuine = await signCustomerToken(SECRET, 'alice');
    const [header, , signature] = genuine.split('.');
    await expectRefused(hs256, `${header}.${b64({ sub: 'mallory', exp: inAnHour() })}.${signature}`); // tampered claims
    const noExpiry = await new SignJWT()
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuedAt()
      .sign(new TextEncoder().encode(SECRET));
    await expectRefused(hs256, noExpiry);
    for (const junk of ['', 'not-a-jwt', 'a.b.c', genuine.slice(0, -2)]) await expectRefused(hs256, junk);
  });

  it('refuses a sub that is not a customer id (missing, blank, a control character, a lone surrogate, too long)', async () => {
    const sign = (sub: unknown) =>
      new SignJWT({ sub } as Record<string, unknown>)
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(SECRET));
    for (const sub of [undefined, '', ' alice', 'al\u0000ice', 'al\ud800ice', 'x'.repeat(129), 42])
      await expectRefused(hs256, await sign(sub));
    expect(await hs256(await sign('x'.repeat(128)))).toBe('x'.repeat(128));
  });

  it('checks issuer and audience when they are configured', async () => {
    const strict = customerTokenVerifier({
      algorithm: 'HS256',
      secret: SECRET,
      issuer: 'https://id.example',
      audience: 'orders',
      maxAgeSeconds: MAX_AGE_SECONDS,
    });
    const sign = (claims: { iss?: string; aud?: string }) => {
      const jwt = new SignJWT()
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('alice')
        .setIssuedAt()
        .setExpirationTime('1h');
      if (claims.iss) jwt.setIssuer(claims.iss);
      if (claims.aud) jwt.setAudience(claims.aud);
      return jwt.sign(new TextEncoder().encode(SECRET));
    };
    expect(await strict(await sign({ iss: 'https://id.example', aud: 'orders' }))).toBe('alice');
    await expectRefused(strict, await sign({ iss: 'https://id.example', aud: 'another-app' }));
    await expectRefused(strict, await sign({ iss: 'https://elsewhere.example', aud: 'orders' }));
    await expectRefused(strict, await sign({}));
  });
});

describe('how old a token may be, and of what type', () => {
  const signAt = (issuedAt: number | undefined, header: Record<string, unknown> = {}) => {
    const jwt = new SignJWT()
      .setProtectedHeader({ alg: 'HS256', ...header })
      .setSubject('alice')
      .setExpirationTime(inAnHour() + 24 * 3600);
    if (issuedAt !== undefined) jwt.setIssuedAt(issuedAt);
    return jwt.sign(new TextEncoder().encode(SECRET));
  };
  const now = () => Math.floor(Date.now() / 1000);

  it('refuses a token issued longer ago than the maximum age, or without iat, however far off its exp', async () => {
    expect(await hs256(await signAt(now() - MAX_AGE_SECONDS + 60))).toBe('alice');
    await expectRefused(hs256, await signAt(now() - MAX_AGE_SECONDS - 60));
    await expectRefused(hs256, await signAt(undefined));
  });

  it('accepts typ JWT or at+jwt, or none, and refuses any other kind of token', async () => {
    for (const typ of ['JWT', 'at+jwt', 'application/at+jwt'])
      expect(await hs256(await signAt(now(), { typ }))).toBe('alice');
    expect(await hs256(await signAt(now()))).toBe('alice');
    for (const typ of ['logout+jwt', 'dpop+jwt', 'secevent+jwt'])
      await expectRefused(hs256, await signAt(now(), { typ }));
    // Signed by the issuer, yet not a string: refused (401), never a TypeError (500).
    for (const typ of [5, null, ['JWT']]) await expectRefused(hs256, await signAt(now(), { typ }));
  });
});

/** The provider's claims, required with a JWKS URL (lib/config/auth.ts refuses one without them). */
const PROVIDER = { issuer: 'https://id.example', audience: 'orders', maxAgeSeconds: MAX_AGE_SECONDS };

describe("RS256 from an identity provider's JWKS URL", () => {
  let jwks: Server;
  let jwksUrl: string;
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;
  beforeAll(async () => {
    keys = await generateKeyPair('RS256', { extractable: true });
    const body = JSON.stringify({
      keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }],
    });
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(() => new Promise((resolve) => jwks.close(resolve)));
  /** A token of the identity provider for bob, as this service expects it. */
  const providerToken = () =>
    new SignJWT()
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(PROVIDER.issuer)
      .setAudience(PROVIDER.audience)
      .setSubject('bob')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(keys.privateKey);

  it("accepts the provider's tokens and refuses an HS256 token signed with its public key (algorithm confusion)", async () => {
    const rs256 = customerTokenVerifier({ algorithm: 'RS256', jwksUrl, ...PROVIDER });
    const token = await providerToken();
    expect(await rs256(token)).toBe('bob');

    const publicPem = await exportSPKI(keys.publicKey);
    const confused = await new SignJWT()
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setSubject('bob')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(publicPem));
    await expectRefused(rs256, confused);
    await expectRefused(rs256, await signCustomerToken(SECRET, 'bob')); // HS256 is off once a JWKS URL is set
    const otherKeys = await generateKeyPair('RS256');
    await expectRefused(
      rs256,
      await new SignJWT()
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('bob')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(otherKeys.privateKey),
    );
  });

  it("refuses the provider's tokens for another application or from another issuer", async () => {
    const rs256 = customerTokenVerifier({ algorithm: 'RS256', jwksUrl, ...PROVIDER });
    const sign = (claims: { iss?: string; aud?: string }) => {
      const jwt = new SignJWT()
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('bob')
        .setIssuedAt()
        .setExpirationTime('1h');
      if (claims.iss) jwt.setIssuer(claims.iss);
      if (claims.aud) jwt.setAudience(claims.aud);
      return jwt.sign(keys.privateKey);
    };
    expect(await rs256(await sign({ iss: PROVIDER.issuer, aud: PROVIDER.audience }))).toBe('bob');
    await expectRefused(rs256, await sign({ iss: PROVIDER.issuer, aud: 'another-app' }));
    await expectRefused(rs256, await sign({ iss: 'https://elsewhere.example', aud: PROVIDER.audience }));
    await expectRefused(rs256, await sign({ iss: PROVIDER.issuer }));
    await expectRefused(rs256, await sign({ aud: PROVIDER.audience }));
  });

  it("an unreachable JWKS endpoint is the service's failure (500), not the caller's (401)", async () => {
    const unreachable = customerTokenVerifier({
      algorithm: 'RS256',
      jwksUrl: 'http://127.0.0.1:1/jwks.json',
      ...PROVIDER,
    });
    const token = await providerToken();
    const failure = await unreachable(token).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(InvalidCustomerToken);
  });
});
