import { createSmtpMailer, type SmtpMailer } from '../../adapters/smtp/mailer.js';
import { mailSettings, type MailSettings } from '../../lib/config/mail.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { startTestMailpit, type TestMailpit } from './mailpit.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** The shop's domain: its From, Reply-To and every Message-ID. */
export const FROM_DOMAIN = 'shop.example';

/** The shop's mail settings, sending through `smtpUrl`. */
export function shopMailSettings(smtpUrl: string): MailSettings {
  return mailSettings({
    SMTP_URL: smtpUrl,
    MAIL_FROM: `Widget Shop <orders@${FROM_DOMAIN}>`,
    MAIL_REPLY_TO: `help@${FROM_DOMAIN}`,
    MAIL_TIME_ZONE: 'UTC',
    SMTP_TIMEOUT: '5s',
  })!;
}

/**
 * A database and a real SMTP server (Mailpit, taking mail only for @customers.example, so another
 * address is a permanent refusal), the mailer reaching it through a proxy whose down() is an SMTP
 * server that cannot be reached.
 */
export interface MailServer {
  database: TestDatabase;
  mailpit: TestMailpit;
  proxy: TcpProxy;
  settings: MailSettings;
  mailer: SmtpMailer;
  /** Before each test: the proxy up, the mailbox empty. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Give its beforeAll ten minutes: a fresh machine builds Mailpit first. */
export async function startMailServer(): Promise<MailServer> {
  const [database, mailpit] = await Promise.all([
    createTestDatabase(),
    startTestMailpit(['--smtp-allowed-recipients', '@customers\\.example$']),
  ]);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(mailpit.smtpUrl).port) });
  const settings = shopMailSettings(`smtp://127.0.0.1:${proxy.port}`);
  const mailer = createSmtpMailer(settings);
  return {
    database,
    mailpit,
    proxy,
    settings,
    mailer,
    async reset() {
      await proxy.up();
      await mailpit.clear();
    },
    async close() {
      mailer.close();
      await proxy.close();
      await mailpit.stop();
      await database.drop();
    },
  };
}
