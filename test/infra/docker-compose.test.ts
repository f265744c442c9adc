import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { parse } from 'yaml';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase, dropDatabase } from '../../dev/databases.js';
import { requiredVersion } from '../../dev/go-modules.js';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { CONFIG_VARIABLES, loadConfig } from '../../lib/config/index.js';
import { requireThirdParties } from '../../lib/config/third-parties.js';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes.js';
import { TypedSearchAttributes } from '@temporalio/common';
import { DOCKER_COMPOSE, injectedDebianTool } from '../helpers/debian-tools.js';

/**
 * No Docker engine here: the compose file is checked as data against the contract, and by
 * `docker-compose config` (Debian's docker-compose, which global setup installs when it is missing).
 */
const FILE = join(PROJECT_ROOT, 'docker-compose.yml');
/** The demo on the local fakes, an override of FILE's services. */
const DEMO_FILE = join(PROJECT_ROOT, 'docker-compose.demo.yml');
interface Service {
  image?: string;
  build?: string | { context: string; target: string };
  command?: string[] | string;
  ports?: string[];
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}
const compose = parse(readFileSync(FILE, 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const demo = (parse(readFileSync(DEMO_FILE, 'utf8'), { merge: true }) as { services: Record<string, Service> })
  .services;
const CONTRACT_VARIABLES = [
  'PORT',
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_TASK_QUEUE',
  'PAYMENT_WINDOW',
  'PAYMENT_WEBHOOK_SECRET',
  'ADMIN_TOKEN',
  'FAULTS_ENABLED',
];

/**
 * What the engine would pass with `given` set in its environment: `${VAR:-default}` → the given
 * value or the default, `${VAR:?message}` → the given value or a stand-in secret of its own (long
 * enough for any, and different for each variable, as METRICS_TOKEN and ADMIN_TOKEN must be).
 */
/** Stand-ins for the required values that must have a shape of their own. */
const STAND_INS: Record<string, string> = { PAYLOAD_ENCRYPTION_KEYS: `k1=${Buffer.alloc(32, 7).toString('base64')}` };

function interpolate(env: Record<string, string | number>, given: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [
      k,
      String(v).replace(
        /\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g,
        (_m, name: string, fallback: string | undefined) =>
          given[name] ?? fallback ?? STAND_INS[name] ?? `${name.toLowerCase()}-from-the-environment-0123`,
      ),
    ]),
  );
}

/** The secrets `docker-compose config` must be given, else it stops naming the one missing. */
const REQUIRED_SECRETS = {
  POSTGRES_PASSWORD: 'p',
  METRICS_TOKEN: 'm',
  PAYLOAD_ENCRYPTION_KEYS: 'k',
  ADMIN_TOKEN: 'y',
  CUSTOMER_JWT_SECRET: 'z',
  ORDER_ID_SECRET: 'w',
};

/** `docker-compose config` of `files` with `env` as the whole environment (plus PATH and HOME). */
function composeConfig(env: Record<string, string>, files: readonly string[] = [FILE]) {
  // An empty env file in place of a developer's .env next to the file: what is given here is all it sees.
  const dir = mkdtempSync(join(tmpdir(), 'compose-env-'));
  try {
    writeFileSync(join(dir, 'empty.env'), '');
    const args = ['--env-file', join(dir, 'empty.env'), ...files.flatMap((f) => ['-f', f]), 'config', '-q'];
    return spawnSync(DOCKER_COMPOSE.path, args, {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      encoding: 'utf8',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The settings the service's own entries refuse to start without, as an operator's environment gives them. */
const STRIPE = {
  STRIPE_SECRET_KEY: 'sk_live_aKeyFromTheEnvironment0123',
  STRIPE_WEBHOOK_SECRET: 'whsec_aSigningSecretFromTheEnvironment0123',
  SMTP_URL: 'smtps://orders:secret@smtp.shop.example:465',
  MAIL_FROM: 'Shop <orders@shop.example>',
};

const workers = Object.entries(services).filter(([name]) => /^worker-\d+$/.test(name));
const appServices: Array<[string, Service]> = [['api', services.api!], ...workers];

describe('docker-compose.yml', () => {
  it('has the production-like stack: PostgreSQL, Temporal 1.32 on it with its schema, search attributes, Web UI, migrations, two workers, the API', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'api',
        'migrate',
        'postgres',
        'temporal',
        'temporal-schema',
        'temporal-setup',
        'temporal-ui',
        'worker-1',
        'worker-2',
      ].sort(),
    );
    expect(services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
    expect(services.temporal!.depends_on).toMatchObject({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(existsSync(join(PROJECT_ROOT, 'ops', 'temporal-schema.sh'))).toBe(true);
    // The server reads the project's dynamic config, mounted where its environment says.
    const dynamicConfig = `${services.temporal!.environment!.DYNAMIC_CONFIG_FILE_PATH}`;
    expect(services.temporal!.volumes).toContain(`./dev/temporal/config/dynamic-config.yaml:${dynamicConfig}:ro`);
    expect(existsSync(join(PROJECT_ROOT, 'dev', 'temporal', 'config', 'dynamic-config.yaml'))).toBe(true);
    expect(workers).toHaveLength(2);
    // The compiled service (the Dockerfile's runtime stage): no TypeScript at run time.
    for (const [, worker] of workers) expect(worker.command).toEqual(['node', 'dist/worker/main.js']);
    expect(services.api!.command).toEqual(['node', 'dist/api/server.js']);
    for (const [, app] of appServices) expect(app.build).toEqual({ context: '.', target: 'runtime' });
    expect(services.migrate!.build).toEqual({ context: '.', target: 'migrate' });
    const stages = [...readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM \S+ AS (\S+)$/gm)].map(
      (m) => m[1],
    );
    expect(stages).toEqual(['build', 'migrate', 'runtime']);
    // Nothing of ours starts before the schema and the search attributes exist.
    for (const [, app] of appServices) {
      expect(app.depends_on).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
        'temporal-setup': { condition: 'service_completed_successfully' },
      });
    }
  });

  it("has the demo run the local stack's entries on the fakes from the build stage's image: the runtime image has no dev/", () => {
    expect(Object.keys(demo).sort()).toEqual(['api', 'migrate', 'worker-1', 'worker-2']);
    for (const [name] of workers) expect(demo[name]!.command).toEqual(['node', '--import', 'tsx', 'dev/worker.ts']);
    expect(demo.api!.command).toEqual(['node', '--import', 'tsx', 'dev/api.ts']);
    for (const [name, app] of appServices) {
      expect(demo[name]!.build, name).toEqual({ context: '.', target: 'migrate' });
      expect(demo[name]!.image, name).toBe(services.migrate!.image);
      // The override's variables over the file's, as compose merges them.
      const config = loadConfig(interpolate({ ...app.environment, ...demo[name]!.environment }));
      expect(requireThirdParties(config), name).toBe('fake');
      expect(config.faultsEnabled, name).toBe(false);
    }
    for (const entry of ['dev/worker.ts', 'dev/api.ts']) expect(existsSync(join(PROJECT_ROOT, entry))).toBe(true);
  });

  it('tags the Temporal images with the versions dev/go/ builds: server and admin-tools as the server, ui as the UI server', () => {
    // The versions the embedded stack and the tests run: the Go wrapper modules are where they are pinned.
    const server = requiredVersion('temporal-server', 'go.temporal.io/server');
    const ui = requiredVersion('temporal-ui-server', 'github.com/temporalio/ui-server/v2');
    const pinned: Record<string, string> = {
      'temporalio/server': server,
      'temporalio/admin-tools': server,
      'temporalio/ui': ui,
    };
    const temporalImages = Object.entries(services).filter(([, service]) => service.image?.startsWith('temporalio/'));
    expect(temporalImages.map(([name]) => name).sort()).toEqual([
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
    ]);
    for (const [name, { image }] of temporalImages) {
      const [repository, tag] = image!.split(':');
      expect(`${repository}:${tag}`, name).toBe(`${repository}:${pinned[repository!]}`);
    }
  });

  it('publishes the contract ports: API 3000; Temporal frontend 7233 and Web UI 8233 on the loopback only', () => {
    expect(services.api!.ports).toContain('3000:3000');
    expect(services.temporal!.ports).toEqual(['127.0.0.1:7233:7233']);
    expect(services['temporal-ui']!.ports).toEqual(['127.0.0.1:8233:8080']);
    // No other service publishes anything: the database and the workers stay inside the network.
    const published = Object.entries(services).filter(([, s]) => s.ports?.length);
    expect(published.map(([name]) => name).sort()).toEqual(['api', 'temporal', 'temporal-ui']);
  });

  it('gives the API and each worker the contract variables, only variables lib/config/ knows, and a valid config', () => {
    for (const [name, app] of appServices) {
      const env = interpolate(app.environment ?? {}, STRIPE);
      const required = CONTRACT_VARIABLES.filter((v) => v !== 'PORT' || name === 'api');
      expect(Object.keys(env), name).toEqual(expect.arrayContaining(required));
      expect(
        Object.keys(env).filter((k) => !(CONFIG_VARIABLES as readonly string[]).includes(k)),
        name,
      ).toEqual([]);
      const config = loadConfig(env);
      expect(config.temporal, name).toMatchObject({
        address: 'temporal:7233',
        namespace: 'default',
        taskQueue: 'orders',
      });
      expect(new URL(config.databaseUrl!).hostname, name).toBe('postgres');
      expect(config.faultsEnabled, name).toBe(false); // fault injection never in production
      expect(config.thirdParties, name).toBe('stripe'); // the service's own: the fakes are the demo's alone
      expect(config.mail?.smtpServer, name).toBe('smtps://smtp.shop.example:465');
      // Secrets are required from the environment, never defaulted in the file.
      expect(String(app.environment!.ADMIN_TOKEN)).toMatch(/^\$\{ADMIN_TOKEN:\?/);
      expect(String(app.environment!.METRICS_TOKEN)).toMatch(/^\$\{METRICS_TOKEN:\?/);
      expect(String(app.environment!.CUSTOMER_JWT_SECRET)).toMatch(/^\$\{CUSTOMER_JWT_SECRET:\?/);
      expect(String(app.environment!.ORDER_ID_SECRET)).toMatch(/^\$\{ORDER_ID_SECRET:\?/);
      expect(String(app.environment!.PAYLOAD_ENCRYPTION_KEYS)).toMatch(/^\$\{PAYLOAD_ENCRYPTION_KEYS:\?/);
      expect(
        config.payloadKeys.map((k) => k.id),
        name,
      ).toEqual(['k1']);
      // Prometheus's token reaches every process it scrapes (ops/prometheus.yml).
      expect(config.metricsToken, name).toBe('metrics_token-from-the-environment-0123');
      // The image runs under NODE_ENV=production, which wants TRUST_PROXY said: the published port, no balancer.
      expect(loadConfig({ ...env, NODE_ENV: 'production' }).trustProxy, name).toBe(false);
    }
    expect(loadConfig(interpolate(services.api!.environment!, STRIPE)).port).toBe(3000);
  });

  it("runs the service's own entries on Stripe, which needs its keys from the environment", () => {
    const stripe = { ...STRIPE, STRIPE_SECRET_KEY: 'sk_test_aKeyFromTheEnvironment0123' };
    for (const [name, app] of appServices) {
      expect(app.environment!.THIRD_PARTIES, name).toBe('stripe');
      expect(() => loadConfig(interpolate(app.environment ?? {})), name).toThrow(/^STRIPE_SECRET_KEY: required/);
      const config = loadConfig(interpolate(app.environment ?? {}, stripe));
      expect(config.stripe, name).toMatchObject({ secretKey: stripe.STRIPE_SECRET_KEY });
      // The image runs under NODE_ENV=production: a test key there only when the environment allows it.
      const production = { ...interpolate(app.environment ?? {}, stripe), NODE_ENV: 'production' };
      expect(() => loadConfig(production), name).toThrow(/^STRIPE_SECRET_KEY: a test key/);
      const allowed = interpolate(app.environment ?? {}, { ...stripe, STRIPE_ALLOW_TEST_KEYS: 'true' });
      expect(loadConfig({ ...allowed, NODE_ENV: 'production' }).stripe?.livemode, name).toBe(false);
    }
  });

  it("migrates the production schema; the demo then creates the fakes' schema its workers run on", () => {
    expect(services.migrate!.command).toEqual(['sh', '-c', 'npm run db:deploy']);
    expect(demo.migrate!.command).toEqual(['sh', '-c', 'npm run db:deploy && npm run db:fakes']);
    const scripts = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts['db:deploy']).toBe('tsx dev/migrate-deploy.ts');
    expect(scripts['db:fakes']).toBe('tsx dev/fakes/apply-schema.ts');
  });

  it("runs the demo's `migrate` command with the service's environment alone: no secret of the API's or the workers'", async () => {
    const env = interpolate(services.migrate!.environment ?? {});
    expect(new URL(env.DATABASE_URL!).hostname).toBe('postgres');
    // The service's database is this run's PostgreSQL here, an empty database of its own.
    const serverUrl = inject('postgresUrl');
    const name = `compose_migrate_${randomUUID().replaceAll('-', '')}`;
    const url = await createDatabase(serverUrl, name);
    try {
      const run = spawnSync('sh', ['-c', String(demo.migrate!.command![2])], {
        cwd: PROJECT_ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, DATABASE_URL: url },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain('Migrations applied.');
      expect(run.stdout).toContain("The fakes' schema is in place.");
    } finally {
      await dropDatabase(serverUrl, name);
    }
  });

  it('registers every search attribute the workflows use, with its type', () => {
    const setup = JSON.stringify(services['temporal-setup']!.command);
    for (const key of SEARCH_ATTRIBUTES)
      expect(setup).toContain(`${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`);
  });

  const composeTool = injectedDebianTool(DOCKER_COMPOSE);
  if ('skip' in composeTool) console.warn(`\`docker-compose config\` skipped: ${composeTool.skip}`);
  it.skipIf('skip' in composeTool)('passes `docker-compose config`, and with the demo on top', () => {
    for (const files of [[FILE], [FILE, DEMO_FILE]]) {
      const run = composeConfig({ PAYMENT_WEBHOOK_SECRET: 'x', ...REQUIRED_SECRETS }, files);
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
    }
  });

  it.skipIf('skip' in composeTool)("fails the demo's `docker-compose config` without PAYMENT_WEBHOOK_SECRET", () => {
    const run = composeConfig(REQUIRED_SECRETS, [FILE, DEMO_FILE]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('set PAYMENT_WEBHOOK_SECRET');
  });

  it.skipIf('skip' in composeTool)(
    'fails `docker-compose config` without POSTGRES_PASSWORD, and without METRICS_TOKEN, naming it',
    () => {
      for (const missing of ['POSTGRES_PASSWORD', 'METRICS_TOKEN'] as const) {
        const { [missing]: _left, ...others } = REQUIRED_SECRETS;
        for (const env of [others, { ...others, [missing]: '' }]) {
          const run = composeConfig(env);
          expect(run.status, missing).not.toBe(0);
          expect(run.stderr, missing).toContain(`set ${missing}`);
        }
      }
    },
  );

  it('keeps the database password out of the file: every use requires it from the environment', () => {
    const text = readFileSync(FILE, 'utf8');
    const uses = [...text.matchAll(/\$\{POSTGRES_PASSWORD([^}]*)\}/g)].map((m) => m[1]);
    // The database itself, the schema tool, the server, `migrate` and the services' DATABASE_URL.
    expect(uses.length).toBeGreaterThanOrEqual(5);
    for (const use of uses) expect(use).toMatch(/^:\?/);
  });

  it("turns the Web UI's write actions off (npm start's: test/infra/web-ui.test.ts)", () => {
    // The variable the temporalio/ui image's config template (ui-server 2.58, config/docker.yaml) reads.
    expect(services['temporal-ui']!.environment).toMatchObject({ TEMPORAL_DISABLE_WRITE_ACTIONS: 'true' });
  });

  it("points the Web UI at the API's codec endpoints, with the operator's cookie, from the origin the API allows", () => {
    const ui = interpolate(services['temporal-ui']!.environment ?? {});
    expect(ui).toMatchObject({
      TEMPORAL_CODEC_ENDPOINT: 'http://localhost:3000/codec',
      TEMPORAL_CODEC_INCLUDE_CREDENTIALS: 'true',
    });
    const api = loadConfig(interpolate(services.api!.environment!, STRIPE));
    expect(api.codecCorsOrigin).toBe('http://localhost:8233');
  });
});

describe('ops/prometheus.yml', () => {
  it("scrapes the API and every worker of the compose file, each with METRICS_TOKEN's file", () => {
    const prometheus = parse(readFileSync(join(PROJECT_ROOT, 'ops', 'prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{
        static_configs: Array<{ targets: string[] }>;
        authorization?: { type?: string; credentials_file?: string };
      }>;
    };
    const targets = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    expect(targets.sort()).toEqual(
      ['api:3000', ...workers.map(([name, worker]) => `${name}:${worker.environment!.WORKER_METRICS_PORT}`)].sort(),
    );
    for (const job of prometheus.scrape_configs)
      expect(job.authorization).toEqual({ type: 'Bearer', credentials_file: 'metrics-token' });
  });
});

describe('ops/temporal-schema.sh', () => {
  it('gives temporal-sql-tool the database password in its environment (SQL_PASSWORD), never on its command line, where `ps` shows it', () => {
    // A stand-in for the admin-tools image's temporal-sql-tool: records each call's arguments and SQL_PASSWORD.
    const dir = mkdtempSync(join(tmpdir(), 'temporal-schema-sh-'));
    try {
      const calls = join(dir, 'calls');
      writeFileSync(
        join(dir, 'temporal-sql-tool'),
        `#!/bin/sh\necho "args=$* password=\${SQL_PASSWORD:-}" >> '${calls}'\n`,
      );
      chmodSync(join(dir, 'temporal-sql-tool'), 0o755);
      const password = 'pw-from-compose-0123';
      const run = spawnSync('sh', [join(PROJECT_ROOT, 'ops', 'temporal-schema.sh')], {
        env: { PATH: `${dir}:${process.env.PATH}`, POSTGRES_USER: 'orders', POSTGRES_PWD: password },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
      const lines = readFileSync(calls, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(6); // create, setup-schema and update-schema of each database
      for (const line of lines) {
        const [args, given] = line.split(' password=');
        expect(args).not.toContain(password);
        expect(given).toBe(password);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Project files `entry` imports, directly or not (relative imports only: packages come from npm ci). */
function localImportClosure(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(join(PROJECT_ROOT, file), 'utf8'));
    for (const { fileName } of importedFiles) {
      if (fileName.startsWith('.'))
        queue.push(relative(PROJECT_ROOT, resolve(PROJECT_ROOT, dirname(file), fileName.replace(/\.js$/, '.ts'))));
    }
  }
  return [...seen];
}

describe('Dockerfile', () => {
  it('leaves the secrets kept beside the sources out of the build context (the migrate image is the build stage) and out of git', () => {
    // Compose reads .env next to its file; Prometheus its token from a file next to its config.
    const prometheus = parse(readFileSync(join(PROJECT_ROOT, 'ops', 'prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ authorization?: { credentials_file?: string } }>;
    };
    const tokenFiles = [
      ...new Set(
        prometheus.scrape_configs.flatMap((c) =>
          c.authorization?.credentials_file === undefined ? [] : [`ops/${c.authorization.credentials_file}`],
        ),
      ),
    ];
    expect(tokenFiles).toEqual(['ops/metrics-token']);
    const lines = (file: string) => readFileSync(join(PROJECT_ROOT, file), 'utf8').split('\n');
    for (const secret of ['.env', ...tokenFiles]) {
      expect(lines('.dockerignore'), '.dockerignore').toContain(secret);
      expect(
        lines('.gitignore').map((l) => l.replace(/^\//, '')),
        '.gitignore',
      ).toContain(secret);
    }
  });

  it('copies everything the postinstall script imports before `npm ci` runs it', () => {
    const lines = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8').split('\n');
    const install = lines.findIndex((l) => /^RUN npm ci\b/.test(l));
    expect(install).toBeGreaterThan(0);
    const copied = lines
      .slice(0, install)
      .filter((l) => l.startsWith('COPY '))
      .flatMap((l) => l.split(/\s+/).slice(1, -1)); // sources; the last word is the destination
    const postinstall = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts.postinstall!;
    const entry = /^tsx (\S+)$/.exec(postinstall)![1]!;
    const needed = localImportClosure(entry);
    expect(needed.length).toBeGreaterThan(3);
    const missing = needed.filter(
      (file) => !copied.some((src) => file === src || file.startsWith(`${src.replace(/\/$/, '')}/`)),
    );
    expect(missing).toEqual([]);
  });
});
