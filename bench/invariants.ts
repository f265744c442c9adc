import { createDb } from '../lib/db.js';
import { checkInvariants } from '../ops/invariants.js';
import { invariantsFor } from '../dev/fakes/invariants.js';

/**
 * The invariant checker of `npm run check` over the bench's database: what a crash could have
 * doubled (stock returned twice, a coupon released twice, a fake's effect twice per key) or left
 * half done. Work still due within `graceMs` is not yet a violation. Returns each violation in words.
 */
export async function invariantViolations(adminUrl: string, graceMs: number): Promise<string[]> {
  const db = createDb(adminUrl, { maxConnections: 1 });
  try {
    const { invariants } = await invariantsFor(db);
    const report = await checkInvariants(db, invariants, { graceMs });
    return report.violations.map((v) => `${v.invariant}: ${v.detail}`);
  } finally {
    await db.$disconnect();
  }
}
