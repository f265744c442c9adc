import { z } from 'zod';
import { ConfigError, LOOPBACK_HOSTS, nonEmpty, positiveDuration } from './env.js';

// Additions (docs/operations.md, "Customer emails"): the SMTP server the customers' emails go
// through, and how they are addressed. The messages never echo a value: SMTP_URL may hold a password.
export const MailSchema = z.object({
  SMTP_URL: nonEmpty.optional(),
  MAIL_FROM: nonEmpty.optional(),
  MAIL_REPLY_TO: z.email().optional(),
  MAIL_TIME_ZONE: nonEmpty.default('UTC'),
  SMTP_TIMEOUT: nonEmpty.default('30s'),
});

export interface MailSettings {
  /** smtp:// (STARTTLS, required unless the host is this machine) or smtps:// (TLS from the start); may hold credentials: never logged. */
  smtpUrl: string;
  /** The server's host and port, for logs and messages. */
  smtpServer: string;
  /** STARTTLS is required: plain SMTP to another machine would carry the credentials and the emails in clear. */
  requireTls: boolean;
  /** The From header as configured: an address, or `Name <address>`. */
  from: string;
  /** The From address's domain: every Message-ID is `<event id@domain>`. */
  messageIdDomain: string;
  replyTo: string | undefined;
  /** IANA time zone the deadlines are written in. */
  timeZone: string;
  /** Bounds connecting, the server's greeting and each wait for an answer: a dead server fails the send, which is retried. */
  timeoutMs: number;
}

/** `Name <address>` or a bare address. */
const FROM = /^(?:[^<>]*<([^<>\s]+@[^<>\s]+)>|([^<>\s]+@[^<>\s]+))$/;

/** Unset SMTP_URL: no customer emails (undefined); set, the rest must be right too. */
export function mailSettings(e: z.infer<typeof MailSchema>): MailSettings | undefined {
  if (e.SMTP_URL === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(e.SMTP_URL);
  } catch {
    throw new ConfigError('SMTP_URL: must be a URL such as smtps://user:password@smtp.example.com:465');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new ConfigError('SMTP_URL: must start with smtp:// (STARTTLS) or smtps:// (TLS)');
  if (url.hostname === '') throw new ConfigError('SMTP_URL: names no host');
  if (e.MAIL_FROM === undefined)
    throw new ConfigError('MAIL_FROM: required with SMTP_URL (e.g. Shop <orders@shop.example>)');
  const from = FROM.exec(e.MAIL_FROM.trim());
  const address = from?.[1] ?? from?.[2];
  if (address === undefined || !z.email().safeParse(address).success)
    throw new ConfigError('MAIL_FROM: must be an address, or a name and an address: Shop <orders@shop.example>');
  if (!isTimeZone(e.MAIL_TIME_ZONE))
    throw new ConfigError('MAIL_TIME_ZONE: must be an IANA time zone such as UTC or Europe/Berlin');
  return {
    smtpUrl: e.SMTP_URL,
    smtpServer: `${url.protocol}//${url.host}`,
    requireTls: url.protocol === 'smtp:' && !LOOPBACK_HOSTS.includes(url.hostname),
    from: e.MAIL_FROM.trim(),
    messageIdDomain: address.slice(address.lastIndexOf('@') + 1),
    replyTo: e.MAIL_REPLY_TO,
    timeZone: e.MAIL_TIME_ZONE,
    timeoutMs: positiveDuration('SMTP_TIMEOUT', e.SMTP_TIMEOUT),
  };
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
