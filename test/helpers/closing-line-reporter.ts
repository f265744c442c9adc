import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `tests: N passed, N failed, N skipped`, which CI's log readers
 * recognise in any language (vitest's own summary is not one of the formats they read). With
 * TEST_CLOSING_LINE_FILE set, the same line is written there too, so that .ci/run can repeat it as
 * its own last line after the suites that run after the tests.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) for (const test of module.children.allTests()) counts[test.result().state]++;
    // A test still pending at the end did not finish (an aborted run): not a pass.
    const line = `tests: ${counts.passed} passed, ${counts.failed + counts.pending} failed, ${counts.skipped} skipped`;
    console.log(`\n${line}`);
    const file = process.env.TEST_CLOSING_LINE_FILE;
    if (file) writeFileSync(file, `${line}\n`);
  }
}
