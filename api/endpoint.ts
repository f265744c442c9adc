import type { z } from 'zod';
import type { Caller, StripeDelivery } from './auth.js';
import type { ErrorCode } from './errors.js';

/** Who may call an endpoint (docs/api.md, "Who may call what"); it decides the endpoint's credential check. */
export type Access =
  /** Anyone, no credentials. */
  | 'public'
  /** `Authorization: Bearer <ADMIN_TOKEN>`. */
  | 'operator'
  /** A customer's JWT (then only for that customer) or the admin token. */
  | 'customerOrOperator'
  /** Prometheus: `METRICS_TOKEN`, which opens nothing else, or the admin token. */
  | 'scraper'
  /** No token: the body is signed with PAYMENT_WEBHOOK_SECRET (api/webhook-signature.ts). */
  | 'paymentProvider'
  /** No token: Stripe signs the body (`Stripe-Signature`) with STRIPE_WEBHOOK_SECRET (adapters/stripe/events.ts). */
  | 'stripe';

export type Method = 'get' | 'put' | 'post' | 'delete';

/**
 * The per-customer budgets an endpoint may count against (api/rate-limit.ts), each with a count of
 * its own: placing orders, and a customer's other order calls, which read the main pool the payment
 * webhook and checkout need.
 */
export type RateLimitBudget = 'placements' | 'reads';

/** A response the OpenAPI document describes: its status, what it means, and its body (JSON unless contentType says otherwise). */
export interface DocumentedResponse<S extends z.ZodType | undefined = z.ZodType | undefined> {
  status: number;
  description: string;
  schema?: S;
  contentType?: string;
}

/** The schemas an endpoint validates its input with; each part present is parsed before the handler runs. */
export interface InputSchemas {
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Keyed by the header's name as the document spells it, e.g. `Idempotency-Key`. */
  headers?: z.ZodObject;
  /** A JSON request body, read by a body parser with a size limit once the caller is known. */
  body?: z.ZodType;
}

/**
 * Who the handler acts for: what the endpoint's access check established. A public endpoint has a
 * caller only when it takes a token optionally (`tokenOptional`) and one was sent.
 */
export type CallerOf<A extends Access> = A extends 'customerOrOperator'
  ? Caller
  : A extends 'operator'
    ? { role: 'operator' }
    : A extends 'stripe'
      ? StripeDelivery
      : A extends 'public'
        ? Caller | undefined
        : undefined;

/** What a handler receives: every input part its schemas declare, parsed, and the caller. */
export type HandlerInput<S extends InputSchemas, A extends Access> = {
  [K in keyof S]-?: S[K] extends z.ZodType ? z.output<S[K]> : undefined;
} & {
  caller: CallerOf<A>;
  /** The port the request came in on: the dev pay button posts to this server's own webhook there. */
  localPort: number;
};

/** The body of an endpoint's success response, as its schema accepts it; none without a schema. */
type SuccessBody<R> = R extends z.ZodType ? z.input<R> : void;

/**
 * An endpoint's code: it gets its validated input and the dependencies it needs, and resolves with
 * the body of its documented success response, or with a Reply for another documented one.
 */
export type Handler<S extends InputSchemas, A extends Access, D, R extends z.ZodType | undefined = undefined> = (
  input: HandlerInput<S, A>,
  deps: D,
) => Promise<SuccessBody<R> | Reply>;

/** A response other than the plain success body: another documented status, or a content type of its own. */
export class Reply {
  constructor(
    readonly body: unknown,
    readonly options: { status?: number; contentType?: string; headers?: Record<string, string> } = {},
  ) {}
}

/** What the document says of what one method does on a path. */
export interface OperationDoc {
  summary: string;
  description?: string;
  access: Access;
  /** Mounted only with FAULTS_ENABLED (dev and tests); 404 otherwise. */
  devOnly?: boolean;
  /**
   * With `public` access: a request that sends `Authorization` has its token checked as on a
   * `customerOrOperator` endpoint (refused: 401, counted by the refused-token throttle), and its
   * holder is the handler's caller; without the header the call is anonymous. For an answer that
   * shows operators more: a wrong token is refused, not answered as anonymous, so the answer's
   * shape cannot serve as an unthrottled test of guessed tokens.
   */
  tokenOptional?: boolean;
  /**
   * Limited per customer by this budget (api/rate-limit.ts), after the access check and before the
   * body is read; the endpoints of one budget share its count.
   */
  rateLimit?: RateLimitBudget;
  /**
   * Also takes the operator session cookie where its access takes the admin token
   * (api/operator-session.ts): what the orders page and the Temporal Web UI call.
   */
  operatorSession?: true;
  /** Called by the Temporal Web UI from its own origin (CODEC_CORS_ORIGIN): CORS headers, and its preflight answered (api/cors.ts). */
  crossOrigin?: true;
  /** The JSON body's limit, when not the default JSON_BODY_LIMIT_KB (api/request-body.ts). */
  bodyLimitKb?: number;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  success: DocumentedResponse;
  /** Responses that are not errors but not success either, e.g. /healthz's 503. */
  otherResponses?: DocumentedResponse[];
  /** The codes this endpoint answers with beyond those its access and input imply (see errorCodesOf). */
  errors: ErrorCode[];
}

/** The input as the mount hands it over: each part parsed with its schema, undefined where none is declared. */
export interface ParsedInput {
  params: unknown;
  query: unknown;
  headers: unknown;
  body: unknown;
  caller: Caller | StripeDelivery | undefined;
  localPort: number;
}

/** One method on one path, with its handler, which needs `D`: what the router mounts and the document describes as one operation. */
export interface Endpoint<D = unknown> extends OperationDoc {
  method: Method;
  /** As the router mounts it, e.g. `/orders/:id`. */
  path: string;
  /** Called only with input its schemas accepted (api/mount-endpoints.ts). */
  handler: (input: ParsedInput, deps: D) => Promise<unknown>;
}

type Schema<T extends z.ZodType> = T | undefined;

/**
 * An endpoint's entry in the table (api/endpoint-table.ts): where it is, and what the document says
 * of it — who may call, what it accepts, what it answers — without its handler, whose type follows
 * from it (HandlerOf).
 */
export type Contract<
  A extends Access = Access,
  P extends Schema<z.ZodObject> = Schema<z.ZodObject>,
  Q extends Schema<z.ZodObject> = Schema<z.ZodObject>,
  H extends Schema<z.ZodObject> = Schema<z.ZodObject>,
  B extends Schema<z.ZodType> = Schema<z.ZodType>,
  R extends Schema<z.ZodType> = Schema<z.ZodType>,
> = Omit<OperationDoc, 'access' | 'rateLimit' | 'tokenOptional' | keyof InputSchemas | 'success'> & {
  method: Method;
  /** As the router mounts it, e.g. `/orders/:id`; a path's other methods answer 405. */
  path: string;
  access: A;
  /** Only where no token is required: elsewhere one always is. */
  tokenOptional?: A extends 'public' ? boolean : never;
  /** Only where the caller is known per customer: the limit counts per customer. */
  rateLimit?: A extends 'customerOrOperator' ? RateLimitBudget : never;
  params?: P;
  query?: Q;
  headers?: H;
  body?: B;
  success: DocumentedResponse<R>;
};

/** Declares an entry of the table, keeping its access and schemas as types for its handler. */
export function contract<
  A extends Access,
  P extends Schema<z.ZodObject> = undefined,
  Q extends Schema<z.ZodObject> = undefined,
  H extends Schema<z.ZodObject> = undefined,
  B extends Schema<z.ZodType> = undefined,
  R extends Schema<z.ZodType> = undefined,
>(entry: Contract<A, P, Q, H, B, R>): Contract<A, P, Q, H, B, R> {
  return entry;
}

/** The handler an entry calls for, which needs `D`: its input, caller and success body follow from the entry. */
export type HandlerOf<C, D> =
  C extends Contract<infer A, infer P, infer Q, infer H, infer B, infer R>
    ? Handler<Declared<{ params: P; query: Q; headers: H; body: B }>, A, D, R>
    : never;

/** The input parts an entry declares a schema for: the ones its handler reads. */
type Declared<S> = { [K in keyof S as S[K] extends undefined ? never : K]: S[K] };

/** An entry with its handler: ready to be given its dependencies and mounted. */
export function handled<C extends Contract, D>(entry: C, handler: HandlerOf<C, D>): Endpoint<D> {
  // The mount parses every input part with the entry's schemas before calling the handler, so
  // the handler's narrower input type holds at run time.
  return { ...entry, handler } as unknown as Endpoint<D>;
}

/** The endpoints with the dependencies their handlers need: ready to mount. */
export function withDeps<D>(endpoints: readonly Endpoint<D>[], deps: D): Endpoint[] {
  return endpoints.map((e) => ({ ...e, handler: (input) => e.handler(input, deps) }));
}

/** The accesses whose check reads the raw body, since their signature covers its exact bytes; it is parsed only once that holds. */
export const SIGNED_BODY_ACCESS: readonly Access[] = ['paymentProvider', 'stripe'];

/** The accesses checked by a bearer token, whose refusals slow their sender down (api/auth-throttle.ts). */
export const BEARER_ACCESS: readonly Access[] = ['operator', 'customerOrOperator', 'scraper'];

/**
 * Every code an endpoint can answer with: its own, plus what the shared steps add — the credential
 * check, the rate limit, input validation, the body parser's limits — and INTERNAL and BUSY, which
 * any endpoint answers when something of ours fails or no database connection comes in time.
 */
export function errorCodesOf(endpoint: OperationDoc): ErrorCode[] {
  const implied: ErrorCode[] = [];
  if (BEARER_ACCESS.includes(endpoint.access) || endpoint.tokenOptional)
    implied.push('UNAUTHORIZED', 'TOO_MANY_FAILED_ATTEMPTS');
  if (endpoint.access === 'paymentProvider') implied.push('INVALID_SIGNATURE');
  if (endpoint.access === 'stripe') implied.push('INVALID_STRIPE_SIGNATURE');
  if (endpoint.rateLimit) implied.push('RATE_LIMITED');
  if (endpoint.params || endpoint.query || endpoint.headers || endpoint.body) implied.push('VALIDATION_FAILED');
  if (endpoint.body) implied.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  return [...new Set<ErrorCode>([...implied, ...endpoint.errors, 'INTERNAL', 'BUSY'])];
}
