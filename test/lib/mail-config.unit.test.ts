import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config/env.js';
import { loadConfig } from '../../lib/config/index.js';
import { mailSettings } from '../../lib/config/mail.js';

const defaults = { MAIL_TIME_ZONE: 'UTC', SMTP_TIMEOUT: '30s' };
const PASSWORD = 'hunter2-smtp-secret';

function settings(env: Record<string, string>) {
  return mailSettings({ ...defaults, ...env });
}

describe('the SMTP settings', () => {
  it('no SMTP_URL: no customer emails', () => {
    expect(settings({})).toBeUndefined();
    expect(loadConfig({}).mail).toBeUndefined();
  });

  it('smtps:// with credentials: the server named without them, the Message-ID domain from MAIL_FROM', () => {
    const mail = settings({
      SMTP_URL: `smtps://orders:${PASSWORD}@smtp.mail.example:465`,
      MAIL_FROM: 'Widget Shop <orders@shop.example>',
      MAIL_TIME_ZONE: 'Europe/Berlin',
      SMTP_TIMEOUT: '10s',
    });
    expect(mail).toMatchObject({
      smtpServer: 'smtps://smtp.mail.example:465',
      requireTls: false, // TLS from the first byte already
      from: 'Widget Shop <orders@shop.example>',
      messageIdDomain: 'shop.example',
      timeZone: 'Europe/Berlin',
      timeoutMs: 10_000,
    });
    expect(mail!.smtpServer).not.toContain(PASSWORD);
  });

  it('smtp:// to another machine requires STARTTLS; to this machine it may stay plain', () => {
    const from = { MAIL_FROM: 'orders@shop.example' };
    expect(settings({ SMTP_URL: 'smtp://smtp.mail.example:587', ...from })!.requireTls).toBe(true);
    expect(settings({ SMTP_URL: 'smtp://127.0.0.1:1025', ...from })!.requireTls).toBe(false);
    expect(settings({ SMTP_URL: 'smtp://localhost:1025', ...from })!.requireTls).toBe(false);
  });

  it.each([
    [{ SMTP_URL: `https://orders:${PASSWORD}@smtp.mail.example` }, 'SMTP_URL: must start with smtp://'],
    [{ SMTP_URL: `not a url ${PASSWORD}` }, 'SMTP_URL: must be a URL'],
    [{ SMTP_URL: 'smtps://smtp.mail.example' }, 'MAIL_FROM: required with SMTP_URL'],
    [{ SMTP_URL: 'smtps://smtp.mail.example', MAIL_FROM: 'Shop <not an address>' }, 'MAIL_FROM: must be an address'],
    [
      { SMTP_URL: 'smtps://smtp.mail.example', MAIL_FROM: 'a@b.example', MAIL_TIME_ZONE: 'Mars/Base' },
      'MAIL_TIME_ZONE',
    ],
    [{ SMTP_URL: 'smtps://smtp.mail.example', MAIL_FROM: 'a@b.example', SMTP_TIMEOUT: '0s' }, 'SMTP_TIMEOUT'],
  ])('refuses %o, naming the variable and never the secret', (env, message) => {
    const attempt = () => settings(env);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (err) {
      expect((err as Error).message).not.toContain(PASSWORD);
    }
  });

  it('a bad MAIL_REPLY_TO stops start-up through loadConfig', () => {
    expect(() =>
      loadConfig({ SMTP_URL: 'smtp://127.0.0.1:1025', MAIL_FROM: 'a@b.example', MAIL_REPLY_TO: 'nope' }),
    ).toThrow('MAIL_REPLY_TO');
  });
});
