import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { expect, it } from 'vitest';
import { closeGracefully } from '../../api/graceful-close.js';

async function slowServer(delayMs: number) {
  const app = express();
  let entered!: () => void;
  const requestEntered = new Promise<void>((resolve) => (entered = resolve));
  app.get('/slow', async (_req, res) => {
    entered();
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    res.json({ finished: true });
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  // `requestEntered`: the request is in its handler, so close() finds it in flight.
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requestEntered };
}

it('stops accepting at once but finishes the request in flight', async () => {
  const { server, base, requestEntered } = await slowServer(500);
  const inFlight = fetch(`${base}/slow`);
  await requestEntered;
  const closing = closeGracefully(server, 5_000);
  await expect(fetch(`${base}/slow`)).rejects.toThrow(); // refused: no longer listening
  const res = await inFlight;
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ finished: true });
  expect(await closing).toBe('drained');
});

it('cuts off a request still running after the grace period', async () => {
  const { server, base, requestEntered } = await slowServer(10_000);
  const inFlight = fetch(`${base}/slow`).then(
    () => 'answered',
    () => 'cut off',
  );
  await requestEntered;
  const started = Date.now();
  expect(await closeGracefully(server, 300)).toBe('forced');
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(await inFlight).toBe('cut off');
});
