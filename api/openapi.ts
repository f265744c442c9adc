import { z } from 'zod';
import {
  createDocument,
  type oas31,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import {
  SIGNATURE_HEADER as STRIPE_SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_SECONDS as STRIPE_SIGNATURE_TOLERANCE_SECONDS,
} from '../adapters/stripe/events.js';
import { errorCodesOf, SIGNED_BODY_ACCESS, type Access, type DocumentedResponse, type Endpoint } from './endpoint.js';
import { ERRORS, type ErrorCode } from './errors.js';
import { SESSION_COOKIE } from './operator-session.js';
import { JSON_BODY_LIMIT_KB, WEBHOOK_BODY_LIMIT_KB } from './request-body.js';
import { MAX_CLOCK_SKEW_SECONDS, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './webhook-signature.js';

export type OpenApiDocument = oas31.OpenAPIObject;

const SECURITY_SCHEMES = {
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'Operators: `ADMIN_TOKEN`. May do everything, for any customer.',
  },
  operatorSession: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      'Operators in a browser: the HttpOnly cookie `POST /operator/session` sets in exchange for `ADMIN_TOKEN`, expiring after `OPERATOR_SESSION_TTL`. ' +
      'A call with it that is not GET or HEAD must be `Content-Type: application/json`.',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'Prometheus: `METRICS_TOKEN`. Opens `/metrics` and nothing else.',
  },
  customerToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      "Customers: a JWT whose `sub` is the customer id, with an `exp` and an `iat` no older than `CUSTOMER_JWT_MAX_AGE`; HS256 with `CUSTOMER_JWT_SECRET`, or RS256 with the keys at `CUSTOMER_JWKS_URL`. Reaches only that customer's orders.",
  },
  paymentTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: TIMESTAMP_HEADER,
    description: `Unix seconds; at most ${MAX_CLOCK_SKEW_SECONDS} s off the server's clock.`,
  },
  paymentSignature: {
    type: 'apiKey',
    in: 'header',
    name: SIGNATURE_HEADER,
    description:
      '`sha256=<hex HMAC-SHA256(PAYMENT_WEBHOOK_SECRET, timestamp + "." + rawBody)>`, over the exact bytes of the body.',
  },
  stripeSignature: {
    type: 'apiKey',
    in: 'header',
    name: STRIPE_SIGNATURE_HEADER,
    description:
      'Stripe\'s scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256(STRIPE_WEBHOOK_SECRET, t + "." + rawBody)>`, over the exact bytes of the body, ' +
      `at most ${STRIPE_SIGNATURE_TOLERANCE_SECONDS} s old; checked with the official client's \`webhooks.constructEvent\`.`,
  },
} satisfies Record<string, oas31.SecuritySchemeObject>;

/** Alternatives: any one entry of the list lets the call in; an empty list means no credentials. */
const SECURITY: Record<Access, oas31.SecurityRequirementObject[]> = {
  public: [],
  operator: [{ adminToken: [] }],
  customerOrOperator: [{ customerToken: [] }, { adminToken: [] }],
  scraper: [{ metricsToken: [] }, { adminToken: [] }],
  paymentProvider: [{ paymentTimestamp: [], paymentSignature: [] }],
  stripe: [{ stripeSignature: [] }],
};

/** Any method on a declared path that the path does not take (api/mount-endpoints.ts). */
const METHOD_NOT_ALLOWED = {
  description: `\`METHOD_NOT_ALLOWED\`: ${ERRORS.METHOD_NOT_ALLOWED.message}`,
  headers: {
    Allow: {
      description: 'the methods the path takes, e.g. `GET, HEAD, POST` (HEAD wherever GET)',
      schema: { type: 'string' as const },
    },
  },
  content: { 'application/json': { schema: errorBody(['METHOD_NOT_ALLOWED']) } },
};

/**
 * The OpenAPI 3.1 document of these endpoints (any whose handlers need anything: it reads only
 * their declarations), their schemas taken from the zod schemas the mount validates with.
 */
export function openApiDocument(endpoints: readonly Endpoint<never>[]): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const endpoint of endpoints) {
    (paths[openApiPath(endpoint.path)] ??= {})[endpoint.method] = operation(endpoint);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'order-lifecycle',
      version: '1',
      description:
        'Orders that are cancelled on time when unpaid, and payments that are never lost. Amounts are integer cents, times ISO-8601 UTC. ' +
        'Every error is `{"error": {"code", "message", "details"?}}` with a 4xx or 5xx status. ' +
        'A method a path does not take answers 405 `METHOD_NOT_ALLOWED` with `Allow` (components.responses.MethodNotAllowed), ' +
        'an unknown path 404 `NOT_FOUND`. See docs/api.md.',
    },
    components: { securitySchemes: SECURITY_SCHEMES, responses: { MethodNotAllowed: METHOD_NOT_ALLOWED } },
    paths,
  });
}

/** `/orders/:id` → `/orders/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:(\w+)/g, '{$1}');
}

function operation(endpoint: Endpoint<never>): ZodOpenApiOperationObject {
  const responses: ZodOpenApiResponsesObject = {};
  for (const documented of [endpoint.success, ...(endpoint.otherResponses ?? [])])
    responses[statusKey(documented.status)] = response(documented);
  for (const [status, codes] of byStatus(errorCodesOf(endpoint))) {
    responses[statusKey(status)] = {
      description: codes.map((code) => `\`${code}\`: ${ERRORS[code].message}`).join('; '),
      content: { 'application/json': { schema: errorBody(codes) } },
    };
  }
  return {
    operationId: operationId(endpoint),
    summary: endpoint.summary,
    ...(description(endpoint) ? { description: description(endpoint) } : {}),
    tags: [tagOf(endpoint)],
    // `{}` first where no credentials at all is one of the alternatives.
    security: endpoint.tokenOptional
      ? [{}, ...SECURITY.customerOrOperator]
      : [...SECURITY[endpoint.access], ...(endpoint.operatorSession ? [{ operatorSession: [] }] : [])],
    requestParams: {
      ...(endpoint.params ? { path: endpoint.params } : {}),
      ...(endpoint.query ? { query: endpoint.query } : {}),
      ...(endpoint.headers ? { header: endpoint.headers } : {}),
    },
    ...(endpoint.body
      ? {
          requestBody: {
            required: true,
            description: bodyLimit(endpoint),
            content: { 'application/json': { schema: endpoint.body } },
          },
        }
      : {}),
    responses,
  };
}

function response(documented: DocumentedResponse) {
  if (!documented.schema) return { description: documented.description };
  return {
    description: documented.description,
    content: { [documented.contentType ?? 'application/json']: { schema: documented.schema } },
  };
}

/** The body parsers' limits (api/request-body.ts): beyond them 413 PAYLOAD_TOO_LARGE. */
function bodyLimit({ access, bodyLimitKb }: Endpoint<never>): string {
  return SIGNED_BODY_ACCESS.includes(access)
    ? `at most ${WEBHOOK_BODY_LIMIT_KB} kB, read raw: the signature covers its exact bytes`
    : `JSON, at most ${bodyLimitKb ?? JSON_BODY_LIMIT_KB} kB`;
}

/** The contract's error shape, its code narrowed to those this route answers with at this status. */
function errorBody(codes: ErrorCode[]) {
  return z.strictObject({
    error: z.strictObject({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z
        .unknown()
        .optional()
        .meta({ description: 'what was wrong, e.g. `issues: [{path, message}]` for VALIDATION_FAILED' }),
    }),
  });
}

function statusKey(status: number): `${1 | 2 | 3 | 4 | 5}${string}` {
  return `${status}` as `${1 | 2 | 3 | 4 | 5}${string}`;
}

function byStatus(codes: ErrorCode[]): Map<number, ErrorCode[]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) groups.set(ERRORS[code].status, [...(groups.get(ERRORS[code].status) ?? []), code]);
  return new Map([...groups].sort(([a], [b]) => a - b));
}

function description(endpoint: Endpoint<never>): string {
  const rateLimited = endpoint.rateLimit ? 'Rate-limited per customer (429 with Retry-After).' : '';
  const devOnly = endpoint.devOnly ? 'Dev and tests only: mounted when `FAULTS_ENABLED=true`, 404 otherwise.' : '';
  return [endpoint.description, rateLimited, devOnly].filter(Boolean).join(' ');
}

function tagOf(endpoint: Endpoint<never>): string {
  if (endpoint.devOnly) return 'dev';
  const first = endpoint.path.split('/')[1];
  if (first === 'products' || first === 'coupons') return 'catalog';
  if (first === 'orders' || first === 'payments') return first;
  if (first === 'webhooks') return 'payments';
  return 'operations';
}

/** `post /orders/:id/cancel` → `postOrdersIdCancel`. */
function operationId(endpoint: Endpoint<never>): string {
  const words = endpoint.path.split(/[/:._-]+/).filter(Boolean);
  return endpoint.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}
