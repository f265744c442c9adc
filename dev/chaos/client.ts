import { signedHeaders } from '../../api/webhook-signature.js';
import { signCustomerToken } from '../customer-token.js';
import type { VerifiedPayment } from '../../store/received-payments.js';

export interface ApiAnswer {
  /** 0: no answer (connection refused, reset, or no answer within the timeout). */
  status: number;
  body: any;
  ms: number;
}

/** The service's HTTP API as the load generator and the probes see it; never throws for an answer it did not get. */
export class ChaosClient {
  constructor(
    private readonly baseUrl: string,
    private readonly secrets: { webhookSecret: string; adminToken: string; customerJwtSecret: string },
    private readonly timeoutMs = 10_000,
  ) {}

  async request(
    method: string,
    path: string,
    options: { json?: unknown; body?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiAnswer> {
    const started = performance.now();
    const headers = {
      ...options.headers,
      ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
    };
    const body = options.json === undefined ? options.body : JSON.stringify(options.json);
    try {
      const res = await fetch(this.baseUrl + path, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.text();
      const json = res.headers.get('content-type')?.includes('application/json');
      return { status: res.status, body: json ? JSON.parse(text) : text, ms: performance.now() - started };
    } catch (err) {
      return { status: 0, body: (err as Error).message, ms: performance.now() - started };
    }
  }

  admin(method: string, path: string, json?: unknown): Promise<ApiAnswer> {
    return this.request(method, path, { json, headers: { authorization: `Bearer ${this.secrets.adminToken}` } });
  }

  /** A customer's call, with a fresh bearer token for that customer. */
  async asCustomer(
    customerId: string,
    method: string,
    path: string,
    options: { json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiAnswer> {
    const token = await signCustomerToken(this.secrets.customerJwtSecret, customerId);
    return this.request(method, path, {
      ...options,
      headers: { ...options.headers, authorization: `Bearer ${token}` },
    });
  }

  /** A correctly signed payment callback, as the provider sends it (a redelivery is simply the same call again). */
  pay(callback: Omit<VerifiedPayment, 'paidAt'>): Promise<ApiAnswer> {
    const body = JSON.stringify({ ...callback, paidAt: new Date().toISOString() });
    const headers = { 'content-type': 'application/json', ...signedHeaders(this.secrets.webhookSecret, body) };
    return this.request('POST', '/payments/callback', { body, headers });
  }
}
