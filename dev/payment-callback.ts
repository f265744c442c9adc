import { signPayload, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../api/webhook-signature.js';

export interface CallbackBody {
  paymentId: string;
  orderId: string;
  amountCents: number;
  paidAt: string;
}

/** The payment provider's callback as it would send it: the JSON body and its signature headers. */
export function signedCallback(secret: string, callback: CallbackBody, nowMs = Date.now()): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(callback);
  const timestamp = Math.floor(nowMs / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signPayload(secret, timestamp, body),
    },
  };
}
