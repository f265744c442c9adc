import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout; `name` says which process wrote the line. */
export function createLogger(name: string, level: string = 'info'): Logger {
  return pino({ name, level, redact: ['*.authorization', '*.webhookSecret', '*.adminToken', 'req.headers["x-payment-signature"]'] });
}
