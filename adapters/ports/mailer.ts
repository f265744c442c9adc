import type { CancelReason, RefundReason } from '../../domain/statuses.js';

/** Money as the order states it: minor units (cents) and its ISO 4217 currency, lower case. */
export interface Amount {
  cents: number;
  currency: string;
}

/**
 * An email to an order's customer about one order event, in the domain's words: the mailer picks
 * its template and subject, and derives its Message-ID from `eventId`, so every attempt at the same
 * event sends the same message.
 */
export type CustomerEmail = {
  /** The order_events row it is about. */
  eventId: string;
  orderId: string;
  to: string;
} &
  /** expiresAt null: the order no longer waits for a payment (paid at placement, or closed since). */
  (
    | { kind: 'placed'; total: Amount; expiresAt: Date | null }
    | { kind: 'payment_reminder'; total: Amount; expiresAt: Date }
    | { kind: 'paid'; total: Amount }
    /** reason null: the order row does not say why. */
    | { kind: 'cancelled'; reason: CancelReason | null }
    | { kind: 'refunded'; amount: Amount; reason: RefundReason | null }
  );
export type CustomerEmailKind = CustomerEmail['kind'];

/** What the SMTP server did with a message: took it, or refused it for good (an unknown mailbox). */
export type MailerResult =
  { outcome: 'accepted'; messageId: string } | { outcome: 'rejected'; messageId: string; reason: string };

/** Sends the customers' emails (adapters/smtp). */
export interface Mailer {
  /**
   * Resolves once the server has answered for the message. Throws MailerUnavailable when it could not
   * be handed over (no connection, a timeout, a temporary 4xx refusal, a login refused): the caller
   * retries, and the retry carries the same Message-ID.
   */
  send(email: CustomerEmail): Promise<MailerResult>;
  /** The Message-ID `send` gives the email about this event. */
  messageId(eventId: string): string;
}

/** The mail server could not take the message now; trying again later may succeed. */
export class MailerUnavailable extends Error {
  override readonly name = 'MailerUnavailable';
}
