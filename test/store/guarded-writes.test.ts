import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';

/**
 * Every status write goes through store/guarded-sql.ts, which takes both `SET status` and
 * `WHERE status = ANY(...)` from a transition of domain/statuses.ts. This reads the code (all of it
 * but the tests) for status writes made any other way: literal SQL that sets `status`, or a Prisma
 * update whose data sets it.
 */
const HELPER = 'store/guarded-sql.ts';

/** `UPDATE t SET … status = …` in SQL text, and `data: { … status: … }` in Prisma calls. */
function statusWritesBypassingTheHelper(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(
    /\bUPDATE\s+[\w."]+(?:\s+\w+)?\s+SET\b([\s\S]*?)(?:\bWHERE\b|\bFROM\b|\bRETURNING\b|`)/gi,
  )) {
    if (/(^|[\s,.])status\s*=/i.test(m[1]!)) found.push(m[0].replace(/\s+/g, ' ').slice(0, 120));
  }
  for (const m of source.matchAll(/\b(?:data|update)\s*:\s*\{[^{}]*\bstatus\s*:/g))
    found.push(m[0].replace(/\s+/g, ' '));
  return found;
}

describe('status writes', () => {
  it('the scan finds both kinds of bypass (so a pass below means something)', () => {
    expect(
      statusWritesBypassingTheHelper("sql`UPDATE orders SET paid_at = now(), status = 'PAID' WHERE id = 1`"),
    ).toHaveLength(1);
    expect(statusWritesBypassingTheHelper("sql`UPDATE coupons c SET status='LOCKED'`")).toHaveLength(1);
    expect(
      statusWritesBypassingTheHelper("db.payment.update({ where: { paymentId }, data: { status: 'CAPTURED' } })"),
    ).toHaveLength(1);
    expect(
      statusWritesBypassingTheHelper(
        'sql`UPDATE orders SET ${cancel.set}, cancelled_at = now() WHERE ${cancel.guard}`',
      ),
    ).toEqual([]);
    expect(statusWritesBypassingTheHelper("db.order.findMany({ where: { status: 'UNPAID' } })")).toEqual([]);
  });

  it('every one in the code goes through the guarded-write helper', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f && !f.startsWith('test/') && f !== HELPER);
    expect(files.length).toBeGreaterThan(50);
    const bypasses = files.flatMap((f) =>
      statusWritesBypassingTheHelper(readFileSync(`${PROJECT_ROOT}/${f}`, 'utf8')).map((w) => `${f}: ${w}`),
    );
    expect(bypasses).toEqual([]);
  });
});
