import nodemailer from 'nodemailer';
import type { MailSettings } from '../../lib/config/mail.js';
import { MailerUnavailable, type CustomerEmail, type Mailer, type MailerResult } from '../ports/mailer.js';
import { renderCustomerEmail } from './templates.js';

export interface SmtpMailer extends Mailer {
  close(): void;
}

/**
 * The customers' emails over SMTP with nodemailer. One connection per message rather than a pool:
 * a few emails per order need no kept-open connections, and each send then meets the server as it
 * is now (restarted, failed over) instead of a pooled socket it dropped.
 */
export function createSmtpMailer(settings: MailSettings): SmtpMailer {
  const transport = nodemailer.createTransport({
    url: settings.smtpUrl,
    requireTLS: settings.requireTls,
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
    // Its logger would write the SMTP dialogue, login included; our messages say what failed.
    logger: false,
    // Every part is a string built here: no attachment or content may be read from a file or URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const messageId = (eventId: string) => `<${eventId}@${settings.messageIdDomain}>`;
  return {
    messageId,
    async send(email: CustomerEmail): Promise<MailerResult> {
      const id = messageId(email.eventId);
      const { subject, text, html } = renderCustomerEmail(email, { timeZone: settings.timeZone });
      try {
        await transport.sendMail({
          from: settings.from,
          to: email.to,
          ...(settings.replyTo === undefined ? {} : { replyTo: settings.replyTo }),
          subject,
          text,
          html,
          messageId: id,
          // RFC 3834: sent by a program, so vacation responders and the like do not answer it.
          headers: { 'Auto-Submitted': 'auto-generated' },
        });
        return { outcome: 'accepted', messageId: id };
      } catch (err) {
        const failure = err as SmtpError;
        if (isRefusedForGood(failure)) return { outcome: 'rejected', messageId: id, reason: describe(failure) };
        // Only what nodemailer's error says in words: its other fields may carry the SMTP dialogue.
        throw new MailerUnavailable(`${settings.smtpServer} did not take the email: ${describe(failure)}`);
      }
    },
    close: () => transport.close(),
  };
}

/** The fields of nodemailer's errors read here. */
interface SmtpError {
  message?: string;
  code?: string;
  command?: string;
  responseCode?: number;
  permanent?: boolean;
}

/**
 * A 5xx answer to this message's recipient or content (an unknown mailbox, a message refused): no
 * retry can change it. A 5xx to our sender or login is the configuration's fault and affects every
 * email, so it is retried until an operator fixes it, like a connection that fails.
 */
function isRefusedForGood(err: SmtpError): boolean {
  return err.permanent === true && (err.command === 'RCPT TO' || err.command === 'DATA' || err.code === 'EMESSAGE');
}

function describe(err: SmtpError): string {
  return `${err.code ?? 'error'}: ${err.message ?? String(err)}`;
}
