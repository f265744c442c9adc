import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout (tests may pass another destination); `name` says which process wrote the line. */
export function createLogger(name: string, level: string = 'info', destination?: DestinationStream): Logger {
  const redact = [
    '*.authorization',
    '*.webhookSecret',
    '*.adminToken',
    '*.secret',
    '*.orderIdSecret',
    // The operator session cookie stands in for the admin token; the payload keys open every history.
    '*.cookie',
    '*.headers.cookie',
    '*.headers["set-cookie"]',
    '*.payloadKeys',
    'req.headers["x-payment-signature"]',
  ];
  return destination ? pino({ name, level, redact }, destination) : pino({ name, level, redact });
}
