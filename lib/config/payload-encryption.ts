import { z } from 'zod';
import type { PayloadKeys } from '../payload-encryption.js';
import { ConfigError, nonEmpty } from './env.js';
import { DEV_PAYLOAD_ENCRYPTION_KEYS, isDevPayloadKey } from './secrets.js';

// Additions (docs/temporal.md, "Encrypted payloads"): the payload codec's keys and the one origin
// that may call the codec endpoints.
export const PayloadEncryptionSchema = z.object({
  PAYLOAD_ENCRYPTION_KEYS: nonEmpty.optional(),
  CODEC_CORS_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https origin' }).optional(),
});

export interface PayloadEncryptionSettings {
  /** The payload codec's AES-256 keys (PAYLOAD_ENCRYPTION_KEYS): the first seals, all open. */
  payloadKeys: PayloadKeys;
  /** The one origin whose pages may call the codec endpoints with credentials: the Temporal Web UI's. */
  codecCorsOrigin: string;
}

export function payloadEncryptionSettings(
  e: z.infer<typeof PayloadEncryptionSchema>,
  { production, temporalUiUrl }: { production: boolean; temporalUiUrl: string },
): PayloadEncryptionSettings {
  return {
    payloadKeys: parsePayloadKeys(e.PAYLOAD_ENCRYPTION_KEYS, production),
    // The Web UI the orders page links to is the one that calls the codec, unless said otherwise.
    codecCorsOrigin:
      e.CODEC_CORS_ORIGIN === undefined ? new URL(temporalUiUrl).origin : corsOrigin(e.CODEC_CORS_ORIGIN),
  };
}

/**
 * PAYLOAD_ENCRYPTION_KEYS: `keyId=<base64 of 32 bytes>`, comma-separated; the first seals new
 * payloads, every one opens what it sealed (rotation: put the new key first, keep the old ones while
 * any history they sealed is kept). Required under NODE_ENV=production, where the public development
 * key may not be among them; elsewhere (npm start, tests, dev tools) that key stands in, so every
 * process of a local stack agrees without being told. Messages name key ids, never key material.
 */
function parsePayloadKeys(text: string | undefined, production: boolean): PayloadKeys {
  const fail = (why: string): never => {
    throw new ConfigError(`PAYLOAD_ENCRYPTION_KEYS: ${why}`);
  };
  if (text === undefined && production)
    fail('required with NODE_ENV=production (keyId=<base64 of 32 random bytes>, e.g. k1=$(openssl rand -base64 32))');
  const keys = (text ?? DEV_PAYLOAD_ENCRYPTION_KEYS).split(',').map((entry, i) => {
    const match = /^([A-Za-z0-9._-]{1,64})=([A-Za-z0-9+/]+={0,2})$/.exec(entry.trim());
    if (match === null) return fail(`entry ${i + 1} must be keyId=<base64 of 32 bytes> (id: letters, digits, . _ -)`);
    const key = Buffer.from(match[2]!, 'base64');
    if (key.length !== 32) return fail(`key "${match[1]}" must be 32 bytes (AES-256), base64-encoded`);
    return { id: match[1]!, key };
  });
  const ids = keys.map((k) => k.id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) fail(`key id "${repeated}" is listed twice`);
  const dev = keys.find(isDevPayloadKey);
  if (production && dev !== undefined)
    fail(`key "${dev.id}" is the public development key, not a secret (NODE_ENV=production)`);
  return keys as unknown as PayloadKeys;
}

/** CODEC_CORS_ORIGIN: an origin (scheme, host, port) as a browser sends it in `Origin`, nothing more. */
function corsOrigin(text: string): string {
  const url = new URL(text);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new ConfigError('CODEC_CORS_ORIGIN: must be an origin such as http://localhost:8233, without a path');
  return url.origin;
}
