// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** Node built-ins and I/O libraries: workflow code must stay deterministic and free of I/O. */
const WORKFLOW_FORBIDDEN_IMPORTS = [
  { group: ['node:*'], message: 'Workflow code is replayed: no Node built-ins.' },
  {
    group: ['pg', '@prisma/*', 'express', 'pino', 'prom-client', 'jose', '@temporalio/client', '@temporalio/worker'],
    message: 'Workflow code is replayed: no I/O libraries (import activities with `import type`).',
  },
  {
    group: ['../activities/*', '../lib/*', '../api/*', '../worker/*'],
    allowTypeImports: true,
    message: 'Workflow code imports only the types of activities, never their code.',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.data/', '.bench/', 'coverage/', 'dev/go/', 'api/public/'] },
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
