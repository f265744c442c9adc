// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * The rooms and who may import whom (docs/architecture.md#rooms-and-who-imports-whom). Each rule is
 * a regular expression over a relative import's path, so `../../api/x.js` and `../api/x.js` are one
 * rule and a package such as `@opentelemetry/api` is never caught.
 */
const into = (/** @type {string[]} */ ...rooms) => `^(\\.\\./)+(${rooms.join('|')})/`;

/** The production code: everything the service runs. dev/, bench/ and test/ are tooling. */
const PRODUCTION = [
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
];
const PRODUCTION_FILES = [...PRODUCTION.map((room) => `${room}/**/*.ts`), 'prisma.config.ts'];

/** The bench's npm workspace (bench/package.json), which npm links into node_modules by this name. */
const BENCH_PACKAGE = 'order-lifecycle-bench';

/** Production never imports tooling: composition roots (dev/start.ts, the tests) hand fakes in. */
const NO_TOOLING = {
  regex: `${into('dev', 'bench', 'test')}|^${BENCH_PACKAGE}(/|$)`,
  message: 'Production code does not import dev/, bench/ or test/: a composition root hands fakes in.',
};

/** Node built-ins and I/O libraries: workflow code must stay deterministic and free of I/O. */
const WORKFLOW_FORBIDDEN_IMPORTS = [
  { group: ['node:*'], message: 'Workflow code is replayed: no Node built-ins.' },
  {
    group: ['pg', '@prisma/*', 'express', 'pino', 'prom-client', 'jose', '@temporalio/client', '@temporalio/worker'],
    message: 'Workflow code is replayed: no I/O libraries (import activities with `import type`).',
  },
  {
    regex: into('activities', 'adapters', 'store', 'handover', 'lib', 'api', 'worker'),
    allowTypeImports: true,
    message: 'Workflow code imports only the types of activities, never their code.',
  },
  NO_TOOLING,
];

/** Room by room, what it must not import (on top of NO_TOOLING); see docs/architecture.md. */
const ROOM_RULES = {
  domain: [
    { regex: '^\\.\\./', message: 'domain/ is the business in its own words: it imports nothing of the others.' },
  ],
  lib: [
    {
      regex: into(...PRODUCTION.filter((room) => room !== 'lib')),
      message: 'lib/ holds leaves only: it imports nothing of the others.',
    },
  ],
  store: [
    {
      regex: into('activities', 'adapters', 'api', 'handover', 'webhooks', 'worker', 'workflows'),
      message: 'store/ is shared by the API and the activities: it imports only domain/ and lib/.',
    },
  ],
  handover: [
    {
      regex: into('activities', 'api', 'worker', 'workflows'),
      message: 'handover/ is shared by the API and the activities: it imports only store/, ports, domain/ and lib/.',
    },
    {
      regex: '^(\\.\\./)+adapters/(?!ports/)',
      message: 'handover/ reads a provider through its port (adapters/ports/), never an adapter.',
    },
  ],
  adapters: [
    {
      regex: into('activities', 'api', 'handover', 'store', 'worker', 'workflows'),
      message: 'adapters/ implement the ports: they import only domain/, lib/ and each other.',
    },
  ],
  activities: [
    {
      regex: '^(\\.\\./)+adapters/(?!ports/)',
      message: 'Activities reach a third party through its port (adapters/ports/), never an adapter.',
    },
    {
      regex: into('api', 'worker', 'workflows'),
      message: 'Activities are called by workflows; they import none of the callers.',
    },
  ],
  api: [
    {
      regex: into('activities'),
      message: 'The API does not import activities: what it shares with them is in store/ and handover/.',
    },
    { regex: into('worker'), message: 'The API and the worker are separate processes: neither imports the other.' },
    { regex: into('workflows'), allowTypeImports: true, message: 'The API names workflows by their types only.' },
  ],
  worker: [
    { regex: into('api'), message: 'The API and the worker are separate processes: neither imports the other.' },
  ],
  webhooks: [
    {
      regex: into('activities', 'api', 'handover', 'worker', 'workflows'),
      message:
        "webhooks/ (the order events' deliveries) is shared by the API and the worker: it imports only store/, ports, domain/ and lib/.",
    },
    {
      regex: '^(\\.\\./)+adapters/(?!ports/)',
      message: 'webhooks/ implements the fulfilment ports (adapters/ports/); it imports no adapter.',
    },
  ],
  ops: [],
};

/**
 * A path to tooling built at run time (`new URL('../dev/…')`, `import('../dev/…')`, or a relative path
 * into it in any string), which no import graph sees. There is no exception: the service's entries
 * are its own, and the local stack's (dev/worker.ts, dev/api.ts) hand the fakes in.
 */
const TOOLING_PATH = String.raw`/(^|\x2F)(dev|bench|test)\x2F|^${BENCH_PACKAGE}(\x2F|$)/`;
const RELATIVE_TOOLING_PATH = String.raw`/^(\.\.?\x2F)+(dev|bench|test)\x2F/`;
const NO_TOOLING_AT_RUN_TIME = [
  {
    selector: `ImportExpression > Literal.source[value=${TOOLING_PATH}]`,
    message: 'Production code does not import dev/, bench/ or test/, not even at run time.',
  },
  {
    selector: `NewExpression[callee.name='URL'] > Literal.arguments[value=${TOOLING_PATH}]`,
    message: 'Production code does not build a path to dev/, bench/ or test/ (which no import rule sees).',
  },
  {
    // Any other string: the import forms have their own messages above.
    selector: `:not(ImportDeclaration, ExportAllDeclaration, ExportNamedDeclaration, ImportExpression, NewExpression) > Literal[value=${RELATIVE_TOOLING_PATH}], TemplateElement[value.raw=${RELATIVE_TOOLING_PATH}]`,
    message: 'Production code does not build a path to dev/, bench/ or test/ (which no import rule sees).',
  },
];

/** The rules above, which a production file may not switch off: a disable comment naming one, or none, is itself an error. */
const GUARDED_RULES = ['no-restricted-syntax', '@typescript-eslint/no-restricted-imports', 'local/no-guard-disabled'];
const noGuardDisabled = {
  meta: { type: 'problem', schema: [] },
  create(/** @type {import('eslint').Rule.RuleContext} */ context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          // `eslint-disable[-line|-next-line] [rule, …] [-- why]`
          const [directive = ''] = comment.value.split(/\s--\s/);
          const found = /^\s*eslint-disable(?:-next-line|-line)?(?:\s+|$)(.*)$/s.exec(directive);
          if (found === null) continue;
          const named = (found[1] ?? '')
            .split(',')
            .map((rule) => rule.trim())
            .filter(Boolean);
          if (named.length === 0 || named.some((rule) => GUARDED_RULES.includes(rule)))
            context.report({
              loc: /** @type {import('estree').SourceLocation} */ (comment.loc),
              message: 'Production code does not switch off the rules that keep dev/, bench/ and test/ out of it.',
            });
        }
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'dist-dev/', '.data/', '.bench/', 'coverage/', 'dev/go/', 'api/public/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: PRODUCTION_FILES,
    plugins: { local: { rules: { 'no-guard-disabled': noGuardDisabled } } },
    rules: { 'no-restricted-syntax': ['error', ...NO_TOOLING_AT_RUN_TIME], 'local/no-guard-disabled': 'error' },
  },
  {
    files: ['prisma.config.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [NO_TOOLING] }] },
  },
  ...Object.entries(ROOM_RULES).map(([room, patterns]) => ({
    files: [`${room}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...patterns, NO_TOOLING] }] },
  })),
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: WORKFLOW_FORBIDDEN_IMPORTS }],
    },
  },
  {
    // Tests and dev tooling read JSON answers whose shape the assertions check.
    files: ['test/**/*.ts', 'dev/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
