import { z } from 'zod';
import { AuthSchema, authSettings, type AuthSettings } from './auth.js';
import { CustomerLimitsSchema, customerLimits, type CustomerLimits } from './customer-limits.js';
import { DatabaseSchema, databaseSettings, type DatabaseSettings } from './database.js';
import { parseEnv } from './env.js';
import { HttpSchema, httpSettings, type HttpSettings } from './http.js';
import { MailSchema, mailSettings, type MailSettings } from './mail.js';
import { ObservabilitySchema, observabilitySettings, type ObservabilitySettings } from './observability.js';
import { OrdersSchema, orderSettings, type OrderSettings } from './orders.js';
import {
  PayloadEncryptionSchema,
  payloadEncryptionSettings,
  type PayloadEncryptionSettings,
} from './payload-encryption.js';
import { isEmbeddedStack, StackSchema } from './secrets.js';
import { TemporalSchema, temporalSettings, type TemporalSettings } from './temporal.js';
import { ThirdPartiesSchema, thirdPartySettings, type ThirdPartySettings } from './third-parties.js';
import { WebhooksSchema, webhookSettings, type WebhookSettings } from './webhooks.js';
import { WorkerTuningSchema, workerTuning, type WorkerTuning } from './worker-tuning.js';

/**
 * The service's configuration, and the only reader of process.env: every process (API, worker,
 * runner) calls loadConfig() once at start-up; a bad value stops start-up with a ConfigError that
 * names the variable. Each concern's variables, defaults and rules live in a file of their own here.
 */
const EnvSchema = z.object({
  ...StackSchema.shape,
  ...HttpSchema.shape,
  ...DatabaseSchema.shape,
  ...TemporalSchema.shape,
  ...AuthSchema.shape,
  ...OrdersSchema.shape,
  ...CustomerLimitsSchema.shape,
  ...ThirdPartiesSchema.shape,
  ...PayloadEncryptionSchema.shape,
  ...ObservabilitySchema.shape,
  // Additions (docs/operations.md, "Configuration"): the worker's Temporal tuning, decided by the bench.
  ...WorkerTuningSchema.shape,
  // Additions (docs/operations.md, "Webhooks"): the order events' deliveries.
  ...WebhooksSchema.shape,
  // Additions (docs/operations.md, "Customer emails"): the SMTP server and the emails' addressing.
  ...MailSchema.shape,
});

/** Every variable loadConfig() reads (the contract's and its additions, docs/operations.md). */
export const CONFIG_VARIABLES = Object.keys(EnvSchema.shape) as ReadonlyArray<keyof typeof EnvSchema.shape>;

export interface Config
  extends
    HttpSettings,
    DatabaseSettings,
    AuthSettings,
    OrderSettings,
    CustomerLimits,
    ThirdPartySettings,
    PayloadEncryptionSettings,
    ObservabilitySettings {
  temporal: TemporalSettings;
  /** The worker's Temporal tuning; read by the worker only. */
  workerTuning: WorkerTuning;
  /** The order events' webhooks: the API's endpoint rules, the worker's deliveries. */
  webhooks: WebhookSettings;
  /** The customers' emails; undefined (SMTP_URL unset): none are sent. */
  mail: MailSettings | undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(EnvSchema, env);
  const embedded = isEmbeddedStack(e);
  const production = e.NODE_ENV === 'production';
  // The secrets first: a deployment missing several hears of them before anything else.
  return {
    ...authSettings(e, embedded),
    ...orderSettings(e, embedded),
    ...thirdPartySettings(e, { embedded, production }),
    ...payloadEncryptionSettings(e, { production, temporalUiUrl: e.TEMPORAL_UI_URL }),
    ...httpSettings(e, { embedded, production }),
    ...databaseSettings(e),
    ...customerLimits(e),
    ...observabilitySettings(e),
    temporal: temporalSettings(e, env),
    workerTuning: workerTuning(e),
    webhooks: webhookSettings(e, embedded),
    mail: mailSettings(e),
  };
}
