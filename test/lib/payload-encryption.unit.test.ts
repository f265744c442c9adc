import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadEncryptionCodec,
  UnknownPayloadKey,
  type PayloadKeys,
} from '../../lib/payload-encryption.js';
import { ConfigError } from '../../lib/config/env.js';
import { loadConfig } from '../../lib/config/index.js';
import { DEV_PAYLOAD_ENCRYPTION_KEYS, devSecretsInUse } from '../../lib/config/secrets.js';

const OLD = { id: 'k1', key: randomBytes(32) };
const NEW = { id: 'k2', key: randomBytes(32) };
const SECRET = { clientSecret: 'pi_123_secret_abc', couponCode: 'WELCOME', customerId: 'alice' };
const plain = (): Payload => defaultPayloadConverter.toPayload(SECRET);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString();

describe('PayloadEncryptionCodec', () => {
  it('seals the whole payload with the first key: no secret, no original encoding in clear, the key id in the metadata', async () => {
    const [sealed] = await new PayloadEncryptionCodec([NEW, OLD]).encode([plain()]);
    expect(text(sealed!.metadata![METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed!.metadata![KEY_ID_METADATA])).toBe('k2');
    for (const word of [...Object.values(SECRET), 'json/plain']) expect(text(sealed!.data)).not.toContain(word);
    const [opened] = await new PayloadEncryptionCodec([NEW]).decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(SECRET);
  });

  it('rotation: what an older key sealed still opens while that key is listed after the new one', async () => {
    const [sealedWithOld] = await new PayloadEncryptionCodec([OLD]).encode([plain()]);
    const rotated = new PayloadEncryptionCodec([NEW, OLD]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([sealedWithOld!]))[0]!)).toEqual(SECRET);
  });

  it('refuses loudly a payload sealed with a key it does not hold, naming the key id', async () => {
    const [sealedWithOld] = await new PayloadEncryptionCodec([OLD]).encode([plain()]);
    const withoutOld = new PayloadEncryptionCodec([NEW]);
    await expect(withoutOld.decode([sealedWithOld!])).rejects.toBeInstanceOf(UnknownPayloadKey);
    await expect(withoutOld.decode([sealedWithOld!])).rejects.toThrow(/"k1"/);
  });

  it('refuses a sealed payload that was altered', async () => {
    const codec = new PayloadEncryptionCodec([NEW]);
    const [sealed] = await codec.encode([plain()]);
    const data = Buffer.from(sealed!.data!);
    data[20] = data[20]! ^ 1;
    await expect(codec.decode([{ ...sealed!, data }])).rejects.toThrow(/does not authenticate/);
  });

  it('passes a payload that is not encrypted through, so histories from before encryption still read', async () => {
    const before = plain();
    expect(await new PayloadEncryptionCodec([NEW]).decode([before])).toEqual([before]);
  });
});

describe('PAYLOAD_ENCRYPTION_KEYS', () => {
  /** A production deployment's other secrets, so that only the keys are in question. */
  const production = {
    NODE_ENV: 'production',
    THIRD_PARTIES: 'stripe',
    STRIPE_SECRET_KEY: 'sk_live_x',
    STRIPE_WEBHOOK_SECRET: `whsec_${'s'.repeat(32)}`,
    ADMIN_TOKEN: 'a'.repeat(32),
    CUSTOMER_JWT_SECRET: 'c'.repeat(32),
    ORDER_ID_SECRET: 'o'.repeat(32),
  };
  const b64 = (key: Buffer) => key.toString('base64');

  it('reads keyId=base64 entries in order: the first seals', () => {
    const keys: PayloadKeys = loadConfig({
      PAYLOAD_ENCRYPTION_KEYS: `k2=${b64(NEW.key)}, k1=${b64(OLD.key)}`,
    }).payloadKeys;
    expect(keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(keys[0].key.equals(NEW.key)).toBe(true);
  });

  it('stands in the public development key outside production, and says so among the dev secrets', () => {
    const config = loadConfig({});
    expect(config.payloadKeys.map((k) => k.id)).toEqual(['dev']);
    expect(devSecretsInUse(config)).toContainEqual(['PAYLOAD_ENCRYPTION_KEYS', DEV_PAYLOAD_ENCRYPTION_KEYS]);
  });

  it.each([
    [{ ...production }, /^PAYLOAD_ENCRYPTION_KEYS: required with NODE_ENV=production/],
    [{ ...production, PAYLOAD_ENCRYPTION_KEYS: DEV_PAYLOAD_ENCRYPTION_KEYS }, /public development key/],
    [{ PAYLOAD_ENCRYPTION_KEYS: 'k1' }, /entry 1 must be keyId=/],
    [{ PAYLOAD_ENCRYPTION_KEYS: `k1=${b64(randomBytes(16))}` }, /"k1" must be 32 bytes/],
    [{ PAYLOAD_ENCRYPTION_KEYS: `k1=${b64(NEW.key)},k1=${b64(OLD.key)}` }, /"k1" is listed twice/],
  ])('refuses %j, naming the variable and never a key', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
    try {
      loadConfig(env);
    } catch (err) {
      for (const key of [NEW.key, OLD.key]) expect((err as Error).message).not.toContain(b64(key));
    }
  });
});
