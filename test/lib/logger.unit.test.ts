import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';

/** What the service's logger writes, line by line. */
function captured(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

it('never writes the operator session cookie or the payload keys, wherever they are logged', () => {
  const { lines, destination } = captured();
  const logger = createLogger('test', 'info', destination);
  const cookie = 'operator_session=v1.1796584453.secretmac';
  logger.info({ req: { headers: { cookie } }, res: { headers: { 'set-cookie': cookie } } }, 'request');
  logger.info({ config: { payloadKeys: [{ id: 'k1', key: 'c2VjcmV0LWtleQ==' }] } }, 'started');
  const text = lines.join('');
  expect(text).not.toContain('secretmac');
  expect(text).not.toContain('c2VjcmV0LWtleQ==');
  expect(text).toContain('[Redacted]');
});
