import type { z } from 'zod';
import type { ErrorCode } from './errors.js';

/** Who may call an endpoint (docs/api.md, "Who may call what"). */
export type Access =
  /** Anyone, no credentials. */
  | 'public'
  /** `Authorization: Bearer <ADMIN_TOKEN>`. */
  | 'operator'
  /** A customer's JWT (then only for that customer) or the admin token. */
  | 'customerOrOperator'
  /** No token: the body is signed with PAYMENT_WEBHOOK_SECRET (api/webhook-signature.ts). */
  | 'paymentProvider';

/** A non-error answer: its status, what it means, and its body (JSON unless contentType says otherwise). */
export interface Answer {
  status: number;
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

/** What the OpenAPI document says about one route; the router itself validates with the same schemas. */
export interface Endpoint {
  method: 'get' | 'put' | 'post' | 'delete';
  /** As the router mounts it, e.g. `/orders/:id`. */
  path: string;
  summary: string;
  description?: string;
  access: Access;
  /** Mounted only with FAULTS_ENABLED (dev and tests); 404 otherwise. */
  devOnly?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  /** A JSON request body, read by a body parser with a size limit. */
  body?: z.ZodType;
  success: Answer;
  /** Answers that are not errors but not success either, e.g. /healthz's 503. */
  otherAnswers?: Answer[];
  /** The codes this route answers with beyond those its access and input imply (see errorCodesOf). */
  errors: ErrorCode[];
}

/**
 * Every code a route can answer with: its own, plus what the shared middleware adds — the token
 * check, the signature check, input validation, the body parser's limits — and INTERNAL, which any
 * route answers when something of ours fails.
 */
export function errorCodesOf(endpoint: Endpoint): ErrorCode[] {
  const implied: ErrorCode[] = [];
  if (endpoint.access === 'operator' || endpoint.access === 'customerOrOperator') implied.push('UNAUTHORIZED');
  if (endpoint.access === 'paymentProvider') implied.push('INVALID_SIGNATURE');
  if (endpoint.params || endpoint.query || endpoint.headers || endpoint.body) implied.push('VALIDATION_FAILED');
  if (endpoint.body) implied.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  return [...new Set<ErrorCode>([...implied, ...endpoint.errors, 'INTERNAL'])];
}
