import { ValueError, type Payload, type PayloadCodec } from '@temporalio/common';
import type { z } from 'zod';
import type { ApiHandler } from '../endpoint-table.js';
import { ApiError } from '../errors.js';
import type { CodecPayloads } from '../responses.js';
import type { CodecPayload } from '../schemas.js';

/**
 * The codec server the Temporal Web UI calls (its config's `codec.endpoint`): the payloads it shows are
 * run through the service's own codec (lib/payload-encryption.ts), so an operator reads them decrypted
 * and nothing else does. Operators only: the admin token, or the operator session cookie the browser
 * sends along (`includeCredentials`).
 */
type CodecHandler = ApiHandler<'decodePayloads' | 'encodePayloads', { payloadCodec: PayloadCodec }>;

export const decodePayloads: CodecHandler = async ({ body }, { payloadCodec }) => ({
  payloads: (await payloadCodec.decode(body.payloads.map(fromJson)).catch(notDecodable)).map(toJson),
});

export const encodePayloads: CodecHandler = async ({ body }, { payloadCodec }) => ({
  payloads: (await payloadCodec.encode(body.payloads.map(fromJson))).map(toJson),
});

/** A payload sealed with a key the service does not hold, or altered: the caller's data, not our fault. */
function notDecodable(err: unknown): never {
  if (err instanceof ValueError) throw new ApiError('PAYLOAD_NOT_DECODABLE', err.message);
  throw err;
}

function fromJson({ metadata, data }: z.output<typeof CodecPayload>): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(data ?? '', 'base64'),
  };
}

function toJson({ metadata, data }: Payload): z.input<typeof CodecPayloads>['payloads'][number] {
  return {
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, base64(v)])),
    data: base64(data),
  };
}

const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
