import { Worker } from 'node:worker_threads';

/** One kind of request in a flood: a GET of `url` at `perSecond`, while fewer than `maxInFlight` are unanswered. */
export interface FloodKind {
  url: string;
  perSecond: number;
  maxInFlight: number;
}

/** What a flood sent of each kind, what it skipped (its cap was reached), and the answers by status. */
export interface FloodTally {
  seconds: number;
  kinds: Record<string, { sent: number; skipped: number; byStatus: Record<string, number> }>;
}

/**
 * An open-loop flood of GETs (each kind at its rate, whatever the answers, up to its cap of
 * unanswered requests) on a thread of its own, so that sending it takes no time from the event loop
 * of the app under test in this process. It stops at stop() or after `maxMs`, whichever comes first;
 * stop() resolves once every request sent was answered.
 */
export function startHttpFlood(kinds: Record<string, FloodKind>, { maxMs }: { maxMs: number }) {
  const worker = new Worker(FLOOD_THREAD, { eval: true, workerData: { kinds, maxMs } });
  const tally = new Promise<FloodTally>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop(): Promise<FloodTally> {
      worker.postMessage('stop');
      const result = await tally;
      await worker.terminate();
      return result;
    },
  };
}

/** The thread's code: plain JavaScript (an eval'd worker is not transpiled), Node's own HTTP client on keep-alive sockets. */
const FLOOD_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require('node:http');
const { kinds, maxMs } = workerData;
const agent = new Agent({ keepAlive: true });
const started = performance.now();
const tally = {};
for (const name of Object.keys(kinds)) tally[name] = { sent: 0, skipped: 0, inFlight: 0, byStatus: {} };
const pending = new Set();
let running = true;
parentPort.on('message', () => (running = false));

function send(name) {
  const t = tally[name];
  t.sent++;
  t.inFlight++;
  const answered = new Promise((resolve) => {
    request(kinds[name].url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
    })
      .on('error', () => resolve('network error'))
      .end();
  }).then((status) => {
    t.byStatus[status] = (t.byStatus[status] || 0) + 1;
    t.inFlight--;
    pending.delete(answered);
  });
  pending.add(answered);
}

function tick() {
  const elapsed = performance.now() - started;
  if (!running || elapsed >= maxMs) return finish(elapsed);
  for (const name of Object.keys(kinds)) {
    const t = tally[name];
    const due = Math.floor((elapsed / 1000) * kinds[name].perSecond) - t.sent - t.skipped;
    for (let i = 0; i < due; i++) {
      if (t.inFlight < kinds[name].maxInFlight) send(name);
      else t.skipped++;
    }
  }
  setTimeout(tick, 5);
}

async function finish(elapsed) {
  await Promise.all(pending);
  agent.destroy();
  const result = {};
  for (const [name, { sent, skipped, byStatus }] of Object.entries(tally)) result[name] = { sent, skipped, byStatus };
  parentPort.postMessage({ seconds: elapsed / 1000, kinds: result });
}

tick();
`;
