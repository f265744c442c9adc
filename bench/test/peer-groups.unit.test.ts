import { describe, expect, it } from 'vitest';
import { PEER_KINDS } from '../peers/kinds.js';
import { peerGroup } from '../peers/peer-process.js';
import { GROUPS } from '../workload.js';

describe("the bench's groups of orders", () => {
  it('never start with one another, since each is found by its prefix', () => {
    const groups = [
      ...Object.values(GROUPS),
      ...PEER_KINDS.flatMap((kind) => (['sustained', 'storm', 'crash'] as const).map((p) => peerGroup(kind, p))),
    ];
    const overlapping = groups.flatMap((a) =>
      groups.filter((b) => a !== b && b.startsWith(a)).map((b) => `${a} ⊂ ${b}`),
    );
    expect(overlapping).toEqual([]);
  });
});
