import { describe, expect, it } from 'vitest';
import { parseOptions } from '../../bench/options.js';
import { PEER_KINDS } from '../../bench/peers/kinds.js';

describe('the bench options for the phases beside the service', () => {
  it('runs every phase by default, the service compiled with the SDK default cache', () => {
    const options = parseOptions(['--quick']);
    expect(options.phases).toEqual({ service: true, floor: true, peers: true, cacheCheck: false, timerCrash: true });
    expect(options.peers).toEqual([...PEER_KINDS]);
    expect(options.workerCache).toBeUndefined();
    expect(options.stockTemporal).toBe(false);
  });

  it('runs only the phases named by --floor, --peers, --timer-crash and --cache-check', () => {
    expect(parseOptions(['--floor']).phases).toEqual({
      service: false,
      floor: true,
      peers: false,
      cacheCheck: false,
      timerCrash: false,
    });
    expect(parseOptions(['--timer-crash']).phases.timerCrash).toBe(true);
    expect(parseOptions(['--timer-crash']).phases.service).toBe(false);
    expect(parseOptions(['--peers', '--peer', 'redis']).phases.peers).toBe(true);
    expect(parseOptions(['--peers', '--peer', 'redis']).peers).toEqual(['redis']);
    expect(parseOptions(['--cache-check']).phases).toEqual({
      service: false,
      floor: false,
      peers: false,
      cacheCheck: true,
      timerCrash: false,
    });
  });

  it('refuses a peer it does not know and a stock switch on the CLI dev server', () => {
    expect(() => parseOptions(['--peer', 'rabbitmq'])).toThrow(/--peer: expected one of scan, redis, graphile/);
    expect(() => parseOptions(['--temporal', 'cli', '--stock-temporal'])).toThrow(/--stock-temporal/);
  });

  it('takes the cache limit as a whole number of at least 2 (the SDK floor for a cache)', () => {
    expect(parseOptions(['--cache', '10']).workerCache).toBe(10);
    expect(parseOptions(['--cache', '1']).workerCache).toBe(2);
  });

  it('gives the floor worker and Redis ports of their own above the workers', () => {
    const { ports } = parseOptions(['--port-base', '26000', '--workers', '2']);
    const taken = [
      ports.postgres,
      ports.temporal,
      ports.temporalUi,
      ports.api,
      ...ports.workers.flatMap((w) => [w.metrics, w.sdkMetrics]),
    ];
    expect(taken).not.toContain(ports.floorSdkMetrics);
    expect(taken).not.toContain(ports.redis);
    expect(ports.redis).toBe(26030);
  });
});
