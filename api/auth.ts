import type { Request, RequestHandler, Response } from 'express';
import {
  readStripeEvent,
  SIGNATURE_HEADER as STRIPE_SIGNATURE_HEADER,
  StripeEventShapeError,
  StripeSignatureError,
} from '../adapters/stripe/events.js';
import type { ProviderEvent } from '../adapters/ports/payment-provider.js';
import { bearerTokenOf, secretCheck } from '../lib/bearer-tokens.js';
import type { Access } from './endpoint.js';
import { InvalidCustomerToken, type VerifyCustomerToken } from './customer-token.js';
import { ApiError } from './errors.js';
import { jsonOfRawBody, rawBody } from './request-body.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from './webhook-signature.js';

/**
 * Who may call what (docs/api.md, "Who may call what"). Operators hold `ADMIN_TOKEN` and may do
 * everything; a customer holds a JWT whose `sub` is their customer id and reaches only their own
 * orders; the payment provider signs its callbacks instead (api/webhook-signature.ts).
 */
export type Caller = { role: 'operator' } | { role: 'customer'; customerId: string };

/**
 * What Stripe's signature established: the event is Stripe's, read as the payment or the failed
 * refund it reports (undefined: a type the service does not read, to be acknowledged and ignored).
 */
export interface StripeDelivery {
  role: 'stripe';
  event: ProviderEvent | undefined;
}

/** What the credential checks compare against. */
export interface Credentials {
  adminToken: string;
  /** Prometheus's token; unset: only the admin token opens /metrics. */
  metricsToken?: string | undefined;
  verifyCustomerToken: VerifyCustomerToken;
  /** The payment callback's HMAC key; unset: that webhook is not mounted. */
  webhookSecret?: string | undefined;
  /** Stripe's signing secret for its webhook; unset: that webhook is not mounted. */
  stripeWebhookSecret?: string | undefined;
}

/**
 * The checks an endpoint's access puts before it. Each leaves the caller in res.locals (callerOf)
 * where there is one; the payment providers' checks read the body, since the signature covers it.
 */
export function accessCheck(access: Access, credentials: Credentials): RequestHandler[] {
  switch (access) {
    case 'public':
      return [];
    case 'operator':
    case 'customerOrOperator':
    case 'scraper':
      return [requireBearer(access, tokenHolder(credentials))];
    case 'paymentProvider':
      return [rawBody, requireSignature(credentials.webhookSecret), jsonOfRawBody];
    case 'stripe':
      return [rawBody, requireStripeSignature(credentials.stripeWebhookSecret), jsonOfRawBody];
  }
}

/**
 * Who a bearer token proves its holder to be, or why it proves nothing. Every bearer route asks this
 * one question, then whether the answer may call it; the failed-authentication throttle
 * (api/auth-throttle.ts) counts only the guesses.
 */
type TokenHolder =
  | Caller
  | { role: 'scraper' }
  /** No bearer token was sent: a client without credentials, not a guess. */
  | { refused: 'missing' }
  /** A customer's token the issuer signed, grown old: not a guess either. */
  | { refused: 'expired' }
  /** A token that fails to verify, counted as a guess of the operator's or a customer's credential. */
  | { refused: 'guess'; guessed: GuessedCredential };

/** Which credential a refused token tried to be: operator (and metrics) guesses and customer ones are counted apart. */
export type GuessedCredential = 'operator' | 'customer';

/**
 * The credential check's refusal (401), saying what was refused so that the throttle can tell a
 * guess from a client that merely sent no token, an expired one, or a valid one on the wrong route.
 */
export class CredentialRefused extends ApiError {
  constructor(
    readonly guessed: GuessedCredential | undefined,
    message: string,
  ) {
    super('UNAUTHORIZED', message);
  }
}

/** A JWS in compact form (RFC 7515 §7.1): what a customer token looks like, unlike the opaque admin token. */
const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** The holder of the request's bearer token, checked against every credential the service knows. */
function tokenHolder(credentials: Credentials): (req: Request) => Promise<TokenHolder> {
  const isAdminToken = secretCheck(credentials.adminToken);
  const isMetricsToken = credentials.metricsToken === undefined ? () => false : secretCheck(credentials.metricsToken);
  return async (req) => {
    const token = bearerToken(req);
    if (token === undefined) return { refused: 'missing' };
    if (isAdminToken(token)) return { role: 'operator' };
    if (isMetricsToken(token)) return { role: 'scraper' };
    if (!COMPACT_JWS.test(token)) return { refused: 'guess', guessed: 'operator' };
    try {
      return { role: 'customer', customerId: await credentials.verifyCustomerToken(token) };
    } catch (err) {
      if (!(err instanceof InvalidCustomerToken)) throw err;
      return err.expired ? { refused: 'expired' } : { refused: 'guess', guessed: 'customer' };
    }
  };
}

/** Which holders a bearer access lets in, and what its 401 says to the others. */
const BEARER_RULES = {
  operator: { admits: ['operator'], needs: 'this call needs the admin bearer token' },
  customerOrOperator: {
    admits: ['operator', 'customer'],
    needs: 'this call needs a customer bearer token (or the admin token)',
  },
  // The metrics token opens /metrics and nothing else.
  scraper: { admits: ['operator', 'scraper'], needs: 'this call needs the metrics bearer token (or the admin token)' },
} as const satisfies Record<BearerAccess, { admits: readonly string[]; needs: string }>;

type BearerAccess = Extract<Access, 'operator' | 'customerOrOperator' | 'scraper'>;

/**
 * The check of a bearer access: lets in the holders it admits (leaving an operator or customer in
 * res.locals, callerOf), and refuses the rest with CredentialRefused, naming the guess if it was one.
 */
function requireBearer(access: BearerAccess, holderOf: (req: Request) => Promise<TokenHolder>): RequestHandler {
  const { admits, needs } = BEARER_RULES[access];
  return async (req, res, next) => {
    const holder = await holderOf(req);
    if ('refused' in holder) {
      if (holder.refused === 'expired') throw new CredentialRefused(undefined, 'the customer bearer token has expired');
      throw new CredentialRefused(holder.refused === 'guess' ? holder.guessed : undefined, needs);
    }
    if (!(admits as readonly string[]).includes(holder.role)) throw new CredentialRefused(undefined, needs);
    if (holder.role !== 'scraper') res.locals.caller = holder satisfies Caller;
    next();
  };
}

/** The payment provider signs the raw body (api/webhook-signature.ts); it is parsed only once the signature holds. */
function requireSignature(webhookSecret: string | undefined): RequestHandler {
  if (webhookSecret === undefined) throw new Error('the payment callback is mounted only with its secret');
  return (req, _res, next) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const headers = { timestamp: req.get(TIMESTAMP_HEADER), signature: req.get(SIGNATURE_HEADER) };
    if (!verifySignature(webhookSecret, headers, raw, Date.now())) throw new ApiError('INVALID_SIGNATURE');
    next();
  };
}

/**
 * Stripe signs the raw body; the SDK checks it (readStripeEvent) and reads the event, which the
 * handler gets as its caller.
 */
function requireStripeSignature(webhookSecret: string | undefined): RequestHandler {
  if (webhookSecret === undefined) throw new Error("Stripe's webhook is mounted only with its signing secret");
  return (req, res, next) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let event: ProviderEvent | undefined;
    try {
      event = readStripeEvent(raw, req.get(STRIPE_SIGNATURE_HEADER) ?? '', webhookSecret);
    } catch (err) {
      if (err instanceof StripeSignatureError) throw new ApiError('INVALID_STRIPE_SIGNATURE');
      // Signed, yet not JSON or not an event: only a holder of the secret can send that, but it is still not a 5xx.
      if (err instanceof SyntaxError) throw new ApiError('VALIDATION_FAILED', 'the request body is not valid JSON');
      if (err instanceof StripeEventShapeError) throw new ApiError('VALIDATION_FAILED', err.message);
      throw err;
    }
    res.locals.caller = { role: 'stripe', event } satisfies StripeDelivery;
    next();
  };
}

/** The caller the access check established for this request, if its access has one. */
export function callerOf(res: Response): Caller | StripeDelivery | undefined {
  return res.locals.caller as Caller | StripeDelivery | undefined;
}

/**
 * The customer an order call acts for: a customer only for themselves (a different `customerId`
 * is 403), an operator for whoever the request names (undefined: everyone).
 */
export function actingFor(caller: Caller, named: string | undefined): string | undefined {
  if (caller.role === 'operator') return named;
  if (named !== undefined && named !== caller.customerId) {
    throw new ApiError('CUSTOMER_MISMATCH', undefined, { customerId: named });
  }
  return caller.customerId;
}

/** Whether the caller may reach an order of `customerId`; routes answer UNKNOWN_ORDER otherwise, so existence does not leak. */
export function mayReach(caller: Caller, customerId: string): boolean {
  return caller.role === 'operator' || caller.customerId === customerId;
}

function bearerToken(req: Request): string | undefined {
  return bearerTokenOf(req.get('authorization'));
}
