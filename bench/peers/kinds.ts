/**
 * The peers the bench runs beside the durable timer, each with the same workload and the service's
 * own guarded cancel and compensation (bench/expiry.ts), each in a file of its own here.
 */
export const PEER_KINDS = ['scan', 'redis', 'graphile'] as const;
export type PeerKind = (typeof PEER_KINDS)[number];

export const PEER_TITLES: Record<PeerKind, string> = {
  scan: 'scan job (every --scan-every s, FOR UPDATE SKIP LOCKED)',
  redis: 'Redis sorted set, Lua claim into a processing set, reaper',
  graphile: 'graphile-worker job per order (run_at, job_key)',
};
