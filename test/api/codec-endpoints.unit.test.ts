import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { PayloadEncryptionCodec } from '../../lib/payload-encryption.js';
import { ADMIN_TOKEN, appWithoutBackends, listening, WEB_UI_ORIGIN } from '../helpers/app-without-backends.js';
import { PAYLOAD_KEYS } from '../helpers/payload-keys.js';

/**
 * The codec server the Temporal Web UI calls: the Temporal codec-server protocol over the service's
 * own codec, for operators, with CORS for the Web UI's origin alone.
 */
const SECRET = { clientSecret: 'pi_1_secret_2', couponCode: 'WELCOME', customerId: 'alice' };
const asOperator = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const json = (payloads: Payload[]) => ({
  payloads: payloads.map(({ metadata, data }) => ({
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(data ?? []).toString('base64'),
  })),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = asOperator) {
  const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('POST /codec/decode and /codec/encode', () => {
  it('decrypt what the service encrypted, and encrypt what decodes back, in the protocol form', async () => {
    const sealed = await new PayloadEncryptionCodec(PAYLOAD_KEYS).encode([defaultPayloadConverter.toPayload(SECRET)]);
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const decoded = await post(base, '/codec/decode', json(sealed));
      expect(decoded.status).toBe(200);
      expect(defaultPayloadConverter.fromPayload(fromJson(decoded.body.payloads[0]))).toEqual(SECRET);

      const encoded = await post(base, '/codec/encode', json([defaultPayloadConverter.toPayload(SECRET)]));
      expect(encoded.status).toBe(200);
      expect(Buffer.from(encoded.body.payloads[0].data, 'base64').toString()).not.toContain('WELCOME');
      const back = await new PayloadEncryptionCodec(PAYLOAD_KEYS).decode([fromJson(encoded.body.payloads[0])]);
      expect(defaultPayloadConverter.fromPayload(back[0]!)).toEqual(SECRET);
    });
  });

  it('pass a payload that is not encrypted through', async () => {
    const plain = json([defaultPayloadConverter.toPayload(SECRET)]);
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      expect((await post(base, '/codec/decode', plain)).body).toEqual(plain);
    });
  });

  it('answer a payload sealed with a key the service does not hold 422 PAYLOAD_NOT_DECODABLE, naming the key id', async () => {
    const other = new PayloadEncryptionCodec([{ id: 'elsewhere', key: Buffer.alloc(32, 'x') }]);
    const sealed = await other.encode([defaultPayloadConverter.toPayload(SECRET)]);
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const res = await post(base, '/codec/decode', json(sealed));
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({
        code: 'PAYLOAD_NOT_DECODABLE',
        message: expect.stringContaining('"elsewhere"'),
      });
    });
  });

  it.each([
    ['no payloads', {}],
    ['payloads not a list', { payloads: 'x' }],
    ['data not base64', { payloads: [{ metadata: {}, data: '***' }] }],
    ['metadata not base64', { payloads: [{ metadata: { encoding: '%%' }, data: '' }] }],
  ])('answer a malformed body (%s) 400 VALIDATION_FAILED in JSON', async (_name, body) => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const res = await post(base, '/codec/decode', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    });
  });

  it('refuse anyone but an operator', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const anonymous = await post(base, '/codec/decode', { payloads: [] }, { 'content-type': 'application/json' });
      expect(anonymous.status).toBe(401);
      const customerish = { authorization: 'Bearer not-the-admin-token', 'content-type': 'application/json' };
      expect((await post(base, '/codec/decode', { payloads: [] }, customerish)).status).toBe(401);
    });
  });
});

describe("CORS: the Web UI's origin alone", () => {
  it('answers its preflight with credentials allowed, and no other origin', async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const preflight = (origin: string) =>
        fetch(`${base}/codec/decode`, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type,x-namespace',
          },
        });
      const ok = await preflight(WEB_UI_ORIGIN);
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe(WEB_UI_ORIGIN);
      expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
      expect(ok.headers.get('access-control-allow-headers')).toMatch(/Content-Type.*X-Namespace/);
      const other = await preflight('https://evil.example');
      expect(other.status).toBe(405);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      // Anywhere else OPTIONS is still a method the path does not take.
      expect((await fetch(`${base}/orders`, { method: 'OPTIONS', headers: { origin: WEB_UI_ORIGIN } })).status).toBe(
        405,
      );
    });
  });

  it("lets the Web UI read the answers, refusals included, and no other origin's page", async () => {
    await listening(appWithoutBackends({ faultsEnabled: false }), async (base) => {
      const fromUi = await post(base, '/codec/decode', { payloads: [] }, { ...asOperator, origin: WEB_UI_ORIGIN });
      expect(fromUi.headers.get('access-control-allow-origin')).toBe(WEB_UI_ORIGIN);
      const refused = await post(
        base,
        '/codec/decode',
        { payloads: [] },
        { 'content-type': 'application/json', origin: WEB_UI_ORIGIN },
      );
      expect(refused.status).toBe(401);
      expect(refused.headers.get('access-control-allow-origin')).toBe(WEB_UI_ORIGIN);
      const elsewhere = await post(
        base,
        '/codec/decode',
        { payloads: [] },
        { ...asOperator, origin: 'https://evil.example' },
      );
      expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});
