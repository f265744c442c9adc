import type { PayloadKeys } from '../../lib/payload-encryption.js';

/**
 * The tests' payload encryption key: the harness's API, worker and env.client seal and open with it,
 * and so do the worker and API processes tests start by hand (SERVICE_SECRETS), so all of them agree.
 */
export const PAYLOAD_KEYS: PayloadKeys = [{ id: 'test-1', key: Buffer.alloc(32, 't') }];

/** The same keys as PAYLOAD_ENCRYPTION_KEYS spells them. */
export const PAYLOAD_ENCRYPTION_KEYS = PAYLOAD_KEYS.map(({ id, key }) => `${id}=${key.toString('base64')}`).join(',');
