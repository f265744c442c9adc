import { PAYLOAD_ENCRYPTION_KEYS } from './payload-keys.js';

/**
 * Secrets for a worker or API that a test starts by hand, outside npm start's embedded stack, where
 * each must be set, at least 32 characters, and none a public development default (lib/config/secrets.ts).
 */
export const SERVICE_SECRETS = {
  ADMIN_TOKEN: 'test-service-admin-token-0123456789abcdef',
  PAYMENT_WEBHOOK_SECRET: 'test-service-webhook-secret-0123456789abc',
  CUSTOMER_JWT_SECRET: 'test-service-customer-jwt-secret-0123456789',
  ORDER_ID_SECRET: 'test-service-order-id-secret-0123456789abcdef',
  // The harness's key: a worker or API started by hand opens what the harness's client sealed.
  PAYLOAD_ENCRYPTION_KEYS,
} as const;
