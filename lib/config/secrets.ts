import { z } from 'zod';
import type { Config } from './index.js';
import { ConfigError } from './env.js';

/**
 * npm start's embedded stack, and the secrets only it may leave at their public development values
 * (printed at start by the runner); anywhere else a secret left at one of them stops start-up.
 */
export const DEV_WEBHOOK_SECRET = 'dev-webhook-secret';
export const DEV_ADMIN_TOKEN = 'dev-admin-token';
export const DEV_CUSTOMER_JWT_SECRET = 'dev-customer-jwt-secret-not-for-production';
export const DEV_ORDER_ID_SECRET = 'dev-order-id-secret-not-for-production';
/** One key, id `dev`: the 32 bytes of `dev-payload-key-not-for-prod-use`. */
export const DEV_PAYLOAD_ENCRYPTION_KEYS = 'dev=ZGV2LXBheWxvYWQta2V5LW5vdC1mb3ItcHJvZC11c2U=';

/** Bearer tokens and HMAC keys outside the embedded stack: what a guess would have to match. */
const MIN_SECRET_LENGTH = 32;
/** HMAC keys: at least the 32 bytes of SHA-256's output (RFC 7518 §3.2 asks this of HS256 keys). */
export const hmacKey = z.string().min(32, 'must be at least 32 characters (a 256-bit key)');

export const StackSchema = z.object({
  // Set by npm start's runner (dev/local-stack.ts) for the worker and API of its own embedded stack.
  EMBEDDED_STACK: z.literal('true', 'only `true`, set by npm start; unset otherwise').optional(),
  NODE_ENV: z.string().optional(),
});

/**
 * npm start's own stack: its runner, when it is to start both PostgreSQL and Temporal itself, and
 * the worker and API it then starts (EMBEDDED_STACK=true). Never under NODE_ENV=production.
 */
export function isEmbeddedStack(
  e: z.infer<typeof StackSchema> & { DATABASE_URL?: string | undefined; TEMPORAL_ADDRESS?: string | undefined },
): boolean {
  if (e.NODE_ENV === 'production') return false;
  return e.EMBEDDED_STACK === 'true' || (e.DATABASE_URL === undefined && e.TEMPORAL_ADDRESS === undefined);
}

export const NOT_EMBEDDED = 'NODE_ENV=production, or DATABASE_URL or TEMPORAL_ADDRESS set by hand';

/**
 * A secret as configured. Only the embedded stack may leave it at its public development default
 * or make it short; anywhere else each of those stops start-up, naming the variable (never its value).
 */
export function secret(name: string, value: string | undefined, devDefault: string, embedded: boolean): string {
  if (embedded) return value ?? devDefault;
  const why =
    value === undefined
      ? `required (${MIN_SECRET_LENGTH}+ random characters)`
      : value === devDefault
        ? 'is the public development default, not a secret,'
        : value.length < MIN_SECRET_LENGTH
          ? `must be at least ${MIN_SECRET_LENGTH} characters`
          : undefined;
  if (why !== undefined || value === undefined)
    throw new ConfigError(`${name}: ${why} outside npm start's embedded stack (${NOT_EMBEDDED})`);
  return value;
}

const DEV_PAYLOAD_KEY = Buffer.from(DEV_PAYLOAD_ENCRYPTION_KEYS.split('=').slice(1).join('='), 'base64');

export function isDevPayloadKey({ key }: { key: Buffer }): boolean {
  return key.equals(DEV_PAYLOAD_KEY);
}

/** The secrets this configuration leaves at their public development defaults, as `[variable, value]`. */
export function devSecretsInUse(config: Config): Array<[string, string]> {
  const defaults: Array<[string, string, string | undefined]> = [
    ['PAYMENT_WEBHOOK_SECRET', DEV_WEBHOOK_SECRET, config.webhookSecret],
    ['ADMIN_TOKEN', DEV_ADMIN_TOKEN, config.adminToken],
    [
      'CUSTOMER_JWT_SECRET',
      DEV_CUSTOMER_JWT_SECRET,
      config.customerTokens.algorithm === 'HS256' ? config.customerTokens.secret : undefined,
    ],
    ['ORDER_ID_SECRET', DEV_ORDER_ID_SECRET, config.orderIdSecret],
    [
      'PAYLOAD_ENCRYPTION_KEYS',
      DEV_PAYLOAD_ENCRYPTION_KEYS,
      config.payloadKeys.some(isDevPayloadKey) ? DEV_PAYLOAD_ENCRYPTION_KEYS : undefined,
    ],
  ];
  return defaults.filter(([, dev, actual]) => actual === dev).map(([name, dev]) => [name, dev]);
}
