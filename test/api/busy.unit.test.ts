import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { errorHandler } from '../../api/errors.js';
import { createLogger } from '../../lib/logger.js';

/**
 * A request whose database call found no free connection within the pool's acquire timeout is shed
 * with 503 BUSY and Retry-After, logged as a warning: the error pg-pool raises then, passed on as it
 * is by Prisma's adapter or wrapped by other code, is recognised through its cause chain.
 */
const logged: Array<{ level: number; msg: string }> = [];
let base: string;
let close: () => void;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  const app = express();
  const exhausted = () => new Error('timeout exceeded when trying to connect');
  app.get('/exhausted', () => {
    throw exhausted();
  });
  app.get('/wrapped', () => {
    throw new Error('reading the product failed', { cause: exhausted() });
  });
  app.get('/broken', () => {
    throw new Error('relation "products" does not exist');
  });
  app.use(errorHandler(createLogger('test', 'warn', sink)));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close?.());

it.each(['/exhausted', '/wrapped'])('%s: 503 BUSY with Retry-After, a warning and no error line', async (path) => {
  logged.length = 0;
  const res = await fetch(base + path);
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('BUSY');
  expect(logged.map((l) => l.level)).toEqual([40]);
});

it('any other failure stays 500 INTERNAL, logged as an error', async () => {
  logged.length = 0;
  const res = await fetch(`${base}/broken`);
  expect(res.status).toBe(500);
  expect(res.headers.get('retry-after')).toBeNull();
  expect(logged.map((l) => l.level)).toEqual([50]);
});
