import { execFileSync } from 'node:child_process';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';

/**
 * The rooms' import rules (eslint.config.js, docs/architecture.md#rooms-and-who-imports-whom) bite:
 * a snippet linted as if it sat at a path in the tree gets an error where the rules forbid the
 * import, and none where they allow it. The project's own config, with only the type-aware parsing
 * switched off, since the snippets are not files tsc knows and the import rules need no types.
 */
const eslint = new ESLint({ cwd: PROJECT_ROOT, overrideConfig: tseslint.configs.disableTypeChecked });
const IMPORT_RULES = ['@typescript-eslint/no-restricted-imports', 'no-restricted-syntax', 'local/no-guard-disabled'];

async function importErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  expect(result!.messages.filter((m) => m.fatal)).toEqual([]);
  return result!.messages.filter((m) => IMPORT_RULES.includes(m.ruleId ?? '')).map((m) => m.message);
}

describe('forbidden imports fail lint', () => {
  it.each([
    ['api/x.ts', "import { cancelWithin } from '../activities/orders.js';", /API does not import activities/],
    ['api/routes/x.ts', "import { createActivities } from '../../activities/index.js';", /API does not/],
    ['worker/x.ts', "import { createFakeThirdParties } from '../dev/fakes/index.js';", /does not import dev\//],
    ['api/x.ts', "import { runBench } from '../bench/main.js';", /does not import dev\/, bench\//],
    ['worker/x.ts', "import { runBench } from 'order-lifecycle-bench/main.js';", /does not import dev\/, bench\//],
    ['api/x.ts', "export const bench = await import('order-lifecycle-bench/main.js');", /not even at run time/],
    ['workflows/x.ts', "import { sleep } from '../test/helpers/x.js';", /does not import dev\/, bench\//],
    ['worker/x.ts', "export const fakes = await import('../dev/fakes/index.js');", /not even at run time/],
    ['api/x.ts', "export const fakes = new URL('../dev/fakes/index.js', import.meta.url);", /build a path to dev\//],
    ['worker/x.ts', "export const fakes = '../dev/fakes/index.js';", /build a path to dev\//],
    ['api/x.ts', 'export const fakes = `../../dev/fakes/${"index"}.js`;', /build a path to dev\//],
    [
      'worker/x.ts',
      "// eslint-disable-next-line no-restricted-syntax -- an exception\nexport const f = new URL('../dev/f.js', import.meta.url);",
      /does not switch off the rules/,
    ],
    [
      'api/x.ts',
      "// eslint-disable-next-line\nexport const fakes = await import('../dev/fakes/index.js');",
      /does not switch off/,
    ],
    ['activities/x.ts', "import { StripePaymentProvider } from '../adapters/stripe/payment-provider.js';", /port/],
    ['store/x.ts', "import { createActivities } from '../activities/index.js';", /store\/ is shared/],
    ['adapters/stripe/x.ts', "import { statusMove } from '../../store/guarded-sql.js';", /adapters\/ implement/],
    ['workflows/x.ts', "import { handOverPayment } from '../handover/payment-handover.js';", /only the types/],
    ['lib/x.ts', "import { ORDER_STATUSES } from '../domain/statuses.js';", /lib\/ holds leaves/],
    ['lib/config/x.ts', "import { statusMove } from '../../store/guarded-sql.js';", /lib\/ holds leaves/],
    ['handover/x.ts', "import { toProviderEvent } from '../adapters/stripe/events.js';", /through its port/],
    ['webhooks/x.ts', "import { createSmtpMailer } from '../adapters/smtp/mailer.js';", /imports no adapter/],
    ['webhooks/x.ts', "import { createActivities } from '../activities/index.js';", /webhooks\/ .* is shared/],
  ])('%s: %s', async (filePath, importLine, why) => {
    const errors = await importErrors(filePath, `${importLine}\nexport const used = 1;\n`);
    expect(errors).toEqual([expect.stringMatching(why)]);
  });
});

describe('allowed imports pass', () => {
  it.each([
    ['api/x.ts', "import { statusMove } from '../store/guarded-sql.js';"],
    ['api/x.ts', "import { handOverPayment } from '../handover/payment-handover.js';"],
    ['api/x.ts', "import { readStripeEvent } from '../adapters/stripe/events.js';"],
    ['api/x.ts', "import type { OrderLifecycle } from '../workflows/order-lifecycle.js';"],
    ['api/x.ts', "import { trace } from '@opentelemetry/api';"],
    ['activities/x.ts', "import type { ThirdParties } from '../adapters/ports/index.js';"],
    ['activities/x.ts', "import { acceptProviderEvent } from '../handover/provider-events.js';"],
    ['handover/x.ts', "import { recordReceivedPayment } from '../store/received-payments.js';"],
    ['webhooks/x.ts', "import type { InvoiceService } from '../adapters/ports/fulfillment-services.js';"],
    ['workflows/x.ts', "import type { Activities } from '../activities/index.js';"],
    ['worker/x.ts', "import { createActivities } from '../activities/index.js';"],
    ['dev/x.ts', "import { createFakeThirdParties } from './fakes/index.js';"],
    ['test/x.ts', "import { createActivities } from '../activities/index.js';"],
    ['lib/config/x.ts', "import { parseDuration } from '../duration.js';"],
    ['api/x.ts', "export const route = '/dev/orders/:id/simulate-payment';"],
    ['api/x.ts', '// eslint-disable-next-line no-control-regex -- its job\nexport const c = /[\\x00-\\x1f]/;'],
  ])('%s: %s', async (filePath, importLine) => {
    expect(await importErrors(filePath, `${importLine}\nexport const used = 1;\n`)).toEqual([]);
  });
});

it('the tree keeps the rules: every production file passes them, none switching one off', async () => {
  // Disable comments ignored: a block `/* eslint-disable */` would hide even the rule against them.
  const strict = new ESLint({
    cwd: PROJECT_ROOT,
    overrideConfig: tseslint.configs.disableTypeChecked,
    allowInlineConfig: false,
  });
  const results = await strict.lintFiles([
    'api',
    'activities',
    'adapters',
    'domain',
    'handover',
    'lib',
    'ops',
    'store',
    'webhooks',
    'worker',
    'workflows',
    'prisma.config.ts',
  ]);
  expect(results.length).toBeGreaterThan(100);
  const broken = results.flatMap((r) =>
    r.messages
      .filter((m) => m.fatal || IMPORT_RULES.includes(m.ruleId ?? ''))
      .map((m) => `${r.filePath}: ${m.message}`),
  );
  expect(broken).toEqual([]);
});

it('every top-level folder of TypeScript is tooling or a room the rules cover', async () => {
  const folders = new Set(
    execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f.includes('/'))
      .map((f) => f.slice(0, f.indexOf('/'))),
  );
  const uncovered: string[] = [];
  for (const folder of [...folders].filter((f) => !['dev', 'bench', 'test'].includes(f))) {
    const { rules } = (await eslint.calculateConfigForFile(`${folder}/x.ts`)) as { rules: Record<string, unknown> };
    if (!rules['@typescript-eslint/no-restricted-imports'] || !rules['no-restricted-syntax']) uncovered.push(folder);
  }
  expect(folders.size).toBeGreaterThan(10);
  expect(uncovered).toEqual([]);
});
