import { describe, expect, it } from 'vitest';
import { parseOptions } from '../options.js';
import { PEER_KINDS } from '../peers/kinds.js';

describe('the bench options for the phases beside the service', () => {
  it('runs every phase by default, on a cold workflow cache of 10 runs', () => {
    const options = parseOptions(['--quick']);
    expect(options.phases).toEqual({
      service: true,
      floor: true,
      peers: true,
      cacheCheck: false,
      timerCrash: true,
      order: false,
      ab: false,
      floorAb: false,
      floorSettingsAb: false,
    });
    expect(options.peers).toEqual([...PEER_KINDS]);
    expect(options.workerCache).toBe(10);
    expect(options.dynamicConfig).toEqual({});
    expect(options.stockTemporal).toBe(false);
  });

  it('runs each ramp step 1.5x the payment window, so its last third carries its own expiries', () => {
    expect(parseOptions([])).toMatchObject({ windowS: 20, rampStepS: 30 });
    expect(parseOptions(['--quick'])).toMatchObject({ windowS: 10, rampStepS: 15 });
    expect(parseOptions(['--window', '10']).rampStepS).toBe(15);
    expect(parseOptions(['--window', '10', '--ramp-step', '20']).rampStepS).toBe(20);
  });

  it('runs only the phases named by --floor, --peers, --timer-crash and --cache-check', () => {
    expect(parseOptions(['--floor']).phases).toEqual({
      service: false,
      floor: true,
      peers: false,
      cacheCheck: false,
      timerCrash: false,
      order: false,
      ab: false,
      floorAb: false,
      floorSettingsAb: false,
    });
    expect(parseOptions(['--order']).phases).toMatchObject({ service: false, order: true, floor: false });
    expect(parseOptions(['--floor-ab']).phases).toMatchObject({
      service: false,
      floor: false,
      peers: false,
      timerCrash: false,
      floorAb: true,
    });
    expect(parseOptions(['--floor-settings-ab']).phases).toMatchObject({
      service: false,
      floor: false,
      floorAb: false,
      floorSettingsAb: true,
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
      order: false,
      ab: false,
      floorAb: false,
      floorSettingsAb: false,
    });
  });

  it('refuses a peer it does not know and a stock switch on the CLI dev server', () => {
    expect(() => parseOptions(['--peer', 'rabbitmq'])).toThrow(/--peer: expected one of scan, redis, graphile/);
    expect(() => parseOptions(['--temporal', 'cli', '--stock-temporal'])).toThrow(/--stock-temporal/);
  });

  it('takes a port base only between the random low ports and the ephemeral range', () => {
    expect(parseOptions(['--port-base', '20000']).ports.postgres).toBe(20001);
    expect(parseOptions(['--port-base', '32737']).ports.redis).toBe(32767);
    for (const base of ['19999', '32738', '24000.5'])
      expect(() => parseOptions(['--port-base', base])).toThrow(
        /--port-base: expected a whole number from 20000 to 32737/,
      );
  });

  it('takes the cache limit as a whole number of at least 2 (the SDK floor for a cache)', () => {
    expect(parseOptions(['--cache', '10']).workerCache).toBe(10);
    expect(parseOptions(['--cache', '1']).workerCache).toBe(2);
  });

  it('runs a lever before and after, interleaved, only when the lever is named', () => {
    const ab = parseOptions(['--ab', '--lever-env', 'WORKER_STACK_TRACE_LIMIT=0']);
    expect(ab.phases).toMatchObject({ service: false, ab: true, order: false });
    expect(ab.leverEnv).toEqual({ WORKER_STACK_TRACE_LIMIT: '0' });
    expect(() => parseOptions(['--ab'])).toThrow(/--ab: name the lever/);
    expect(ab.abStorm).toBe(false);
    expect(parseOptions(['--ab', '--ab-storm', '--lever-env', 'X=1']).abStorm).toBe(true);
    expect(parseOptions(['--floor-ab', '--ab-storm']).abStorm).toBe(true);
    expect(() => parseOptions(['--ab-storm'])).toThrow(/--ab-storm: only with --ab or --floor-ab/);
  });

  it('takes a variable for the Temporal Server process as a lever, on the server only', () => {
    expect(parseOptions(['--ab', '--lever-server-env', 'GOGC=200']).leverServerEnv).toEqual({ GOGC: '200' });
    expect(() => parseOptions(['--ab', '--temporal', 'cli', '--lever-server-env', 'GOGC=200'])).toThrow(
      /--lever-server-env: Temporal Server 1.32 only/,
    );
  });

  it('takes dynamic config settings to try as KEY=VALUE, the value as YAML', () => {
    expect(parseOptions(['--dynamic', 'history.timerTaskBatchSize=50']).dynamicConfig).toEqual({
      'history.timerTaskBatchSize': '50',
    });
    expect(() => parseOptions(['--dynamic', 'history.timerTaskBatchSize'])).toThrow(/--dynamic: expected KEY=VALUE/);
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
