import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  METADATA_ENCODING_KEY,
  ValueError,
  type DataConverter,
  type Payload,
  type PayloadCodec,
} from '@temporalio/common';
import proto from '@temporalio/proto';

/**
 * Payload encryption (docs/temporal.md, "Encrypted payloads"): every payload the API, the worker and
 * the dev tools send to Temporal is sealed with AES-256-GCM before it leaves the process, so Temporal's
 * store, its Web UI and anyone who reads a history see ciphertext; the operators read it through the
 * codec endpoints (api/routes/codec.ts), which run this same codec. Both sides import it from here.
 */

/** One AES-256 key and the id that names it in each payload it sealed. */
export interface PayloadKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/** The configured keys (PAYLOAD_ENCRYPTION_KEYS): the first seals, every one opens what it sealed. */
export type PayloadKeys = readonly [PayloadKey, ...PayloadKey[]];

/** The metadata a sealed payload carries: Temporal's own encoding name for it, and which key sealed it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12; // GCM's standard nonce: random per payload, so a key may seal 2^32 payloads safely
const TAG_BYTES = 16;
const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

/** A sealed payload names a key this process does not hold: refuse loudly rather than hand on ciphertext. */
export class UnknownPayloadKey extends ValueError {
  constructor(keyId: string) {
    super(`a payload is encrypted with key "${keyId}", which PAYLOAD_ENCRYPTION_KEYS does not list`);
  }
}

/**
 * Seals the whole payload, its metadata included (the original encoding says what the data is), as
 * Temporal's samples do: `iv || ciphertext || tag` in the data, the key's id in the metadata. A payload
 * that is not sealed is passed through on decode, so histories written before encryption still replay
 * and read.
 */
export class PayloadEncryptionCodec implements PayloadCodec {
  private readonly sealing: PayloadKey;
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(keys: PayloadKeys) {
    this.sealing = keys[0];
    this.byId = new Map(keys.map(({ id, key }) => [id, key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.open(payload));
  }

  private seal(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.sealing.key, iv);
    const plain = PayloadMessage.encode(payload).finish();
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from(this.sealing.id),
      },
      data: Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]),
    };
  }

  private open(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (encoding === undefined || encoding === null || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING)
      return payload;
    const keyIdBytes = payload.metadata?.[KEY_ID_METADATA];
    if (keyIdBytes === undefined || keyIdBytes === null)
      throw new ValueError(`an encrypted payload has no ${KEY_ID_METADATA}`);
    const keyId = Buffer.from(keyIdBytes).toString();
    const key = this.byId.get(keyId);
    if (key === undefined) throw new UnknownPayloadKey(keyId);
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) throw new ValueError(`an encrypted payload (key "${keyId}") is truncated`);
    const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new ValueError(`an encrypted payload (key "${keyId}") does not authenticate: altered, or another key`);
    }
    const opened = PayloadMessage.decode(plain);
    return { metadata: opened.metadata, data: opened.data };
  }
}

/** The data converter of every Temporal client and worker of the service: default conversion, then encryption. */
export function encryptedDataConverter(keys: PayloadKeys): DataConverter {
  return { payloadCodecs: [new PayloadEncryptionCodec(keys)] };
}
