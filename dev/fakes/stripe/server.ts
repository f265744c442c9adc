import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeStripeAccount, StripeRefusal } from './account.js';
import { decodeForm, listOf, textOf, type FormValue } from './form.js';
import { intentJson, listJson, refundJson, searchJson } from './wire.js';

/**
 * How the fake fails while an outage is on: Stripe answering 500 before its endpoint began
 * (`server-error`) or after (`server-error-kept`: the 500 is kept under the idempotency key and
 * answered to it again, as Stripe's idempotency layer does for about 24 hours), throttling (429),
 * or the connection dropped.
 */
export type Outage = 'server-error' | 'server-error-kept' | 'rate-limited' | 'connection-dropped';

export type Route =
  'create-intent' | 'retrieve-intent' | 'cancel-intent' | 'search-intents' | 'create-refund' | 'list-refunds';

export interface RecordedCall {
  route: Route;
  /** 0: no answer (the connection was dropped). */
  status: number;
  idempotencyKey: string | undefined;
  /** The answer came from the idempotency store: Stripe did nothing again. */
  replayed: boolean;
}

interface Answer {
  status: number;
  body: object;
}

const ROUTES: ReadonlyArray<[string, RegExp, Route]> = [
  ['POST', /^\/v1\/payment_intents$/, 'create-intent'],
  ['GET', /^\/v1\/payment_intents\/search$/, 'search-intents'],
  ['GET', /^\/v1\/payment_intents\/([\w-]+)$/, 'retrieve-intent'],
  ['POST', /^\/v1\/payment_intents\/([\w-]+)\/cancel$/, 'cancel-intent'],
  ['POST', /^\/v1\/refunds$/, 'create-refund'],
  ['GET', /^\/v1\/refunds$/, 'list-refunds'],
];

/**
 * A stateful stand-in for Stripe's API on a loopback port, speaking its wire format (form-encoded
 * requests, JSON answers, `error` objects, `Idempotency-Key`), for the behaviour stripe-mock's
 * fixed answers cannot show: a payment that succeeds while the deadline fires, a processing one,
 * an outage, a refund retried after Stripe forgot its idempotency key.
 */
export class FakeStripe {
  readonly account = new FakeStripeAccount();
  readonly calls: RecordedCall[] = [];
  outage: Outage | undefined;
  /** key → the request it answered and its answer, until forgotten, as Stripe's 24-hour store. */
  private readonly idempotency = new Map<string, { fingerprint: string; answer: Answer }>();
  private readonly nextHooks = new Map<Route, () => void>();
  /** Requests to this route take effect, but their answers are lost: the connection drops instead. */
  losingAnswersTo: Route | undefined;
  // A bug of the fake's own drops the connection (the client reports it) and is printed, never answered as Stripe's.
  private readonly server = createServer((req, res) =>
    this.serve(req, res).catch((err: unknown) => {
      console.error('the fake Stripe failed:', err);
      res.destroy();
    }),
  );

  private constructor(private readonly secretKey: string) {}

  /** Listens on 127.0.0.1, on a port of the system's choosing. */
  static async start(secretKey: string): Promise<FakeStripe> {
    const fake = new FakeStripe(secretKey);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** For STRIPE_API_BASE. */
  get apiBase(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Runs `action` just before the next request to `route` is handled: something that happened meanwhile. */
  beforeNext(route: Route, action: () => void): void {
    this.nextHooks.set(route, action);
  }

  /** Stripe keeps idempotency keys for about 24 hours: this is the next day. */
  forgetIdempotencyKeys(): void {
    this.idempotency.clear();
  }

  callsTo(route: Route): RecordedCall[] {
    return this.calls.filter((c) => c.route === route);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const body = await readBody(req);
    const found = ROUTES.map(([method, path, route]) => ({
      route,
      match: req.method === method && path.exec(url.pathname),
    })).find((r) => r.match);
    if (!found?.match)
      return send(res, {
        status: 404,
        body: error('invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname})`),
      });
    const { route } = found;
    const key = header(req, 'idempotency-key');
    const record = (answer: Answer, replayed = false) => {
      const lost = this.losingAnswersTo === route;
      this.calls.push({ route, status: lost ? 0 : answer.status, idempotencyKey: key, replayed });
      if (lost) req.socket.destroy();
      else send(res, answer);
    };
    this.nextHooks.get(route)?.();
    this.nextHooks.delete(route);
    if (this.outage === 'connection-dropped') {
      this.calls.push({ route, status: 0, idempotencyKey: key, replayed: false });
      return void req.socket.destroy();
    }
    if (this.outage === 'server-error')
      return record({ status: 500, body: error('api_error', 'An unknown error occurred') });
    if (this.outage === 'rate-limited')
      return record({ status: 429, body: error('invalid_request_error', 'Too many requests', 'rate_limit') });
    // Quoting the key, as stripe-mock does (Stripe masks all but its end): the adapter must not pass it on.
    const authorization = header(req, 'authorization');
    if (authorization !== `Bearer ${this.secretKey}`)
      return record({
        status: 401,
        body: error(
          'invalid_request_error',
          `Invalid API Key provided: ${authorization?.replace(/^Bearer /, '') ?? ''}`,
        ),
      });
    if (req.method === 'POST' && !header(req, 'content-type')?.startsWith('application/x-www-form-urlencoded'))
      return record({
        status: 400,
        body: error('invalid_request_error', 'Content-Type must be application/x-www-form-urlencoded'),
      });

    const fingerprint = createHash('sha256').update(`${req.method} ${url.pathname} ${body}`).digest('hex');
    const stored = key === undefined ? undefined : this.idempotency.get(key);
    if (stored && stored.fingerprint !== fingerprint) {
      return record({
        status: 400,
        body: error(
          'idempotency_error',
          'Keys for idempotent requests can only be used with the same parameters they were first used with.',
        ),
      });
    }
    if (stored) return record(stored.answer, true);
    if (this.outage === 'server-error-kept') {
      const failed = { status: 500, body: error('api_error', 'An unknown error occurred') };
      if (key !== undefined) this.idempotency.set(key, { fingerprint, answer: failed });
      return record(failed);
    }

    const params = req.method === 'GET' ? decodeForm(url.search.slice(1)) : decodeForm(body);
    const answer = this.answer(route, found.match[1], params);
    if (key !== undefined) this.idempotency.set(key, { fingerprint, answer });
    record(answer);
  }

  private answer(route: Route, pathId: string | undefined, params: Record<string, FormValue>): Answer {
    const { account } = this;
    const expand = listOf(params.expand);
    try {
      switch (route) {
        case 'create-intent': {
          const intent = account.createIntent({
            amount: Number(textOf(params.amount)),
            currency: textOf(params.currency) ?? '',
            metadata: stringRecord(params.metadata),
          });
          return ok(intentJson(account, intent, expand));
        }
        case 'retrieve-intent':
          return ok(intentJson(account, account.intent(pathId!), expand));
        case 'cancel-intent':
          return ok(intentJson(account, account.cancelIntent(pathId!, textOf(params.cancellation_reason)), expand));
        case 'search-intents': {
          const nested = expand.filter((e) => e.startsWith('data.')).map((e) => e.slice('data.'.length));
          const found = account.searchIntents(textOf(params.query) ?? '');
          return ok(
            searchJson(
              '/v1/payment_intents/search',
              found.map((i) => intentJson(account, i, nested)),
            ),
          );
        }
        case 'create-refund': {
          const amount = textOf(params.amount);
          const refund = account.createRefund({
            paymentIntent: textOf(params.payment_intent) ?? '',
            amount: amount === undefined ? undefined : Number(amount),
            metadata: stringRecord(params.metadata),
          });
          return ok(refundJson(refund));
        }
        case 'list-refunds': {
          const intentId = textOf(params.payment_intent);
          const refunds =
            intentId === undefined ? [...account.refunds.values()].reverse() : account.refundsOf(intentId);
          return ok(listJson('/v1/refunds', refunds.map(refundJson)));
        }
      }
    } catch (err) {
      if (err instanceof StripeRefusal)
        return { status: err.status, body: { error: { ...err.error, message: err.message } } };
      throw err;
    }
  }
}

function ok(body: object): Answer {
  return { status: 200, body };
}

function error(type: string, message: string, code?: string): object {
  return { error: { type, message, ...(code && { code }) } };
}

function send(res: ServerResponse, { status, body }: Answer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake${Date.now()}` });
  res.end(JSON.stringify(body));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function stringRecord(value: FormValue | undefined): Record<string, string> {
  if (value === undefined || typeof value === 'string') return {};
  return Object.fromEntries(Object.entries(value).filter((kv): kv is [string, string] => typeof kv[1] === 'string'));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
