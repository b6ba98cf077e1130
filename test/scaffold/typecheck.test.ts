/**
 * The generated TypeScript type-checks against this repository's public API: the project is generated into a
 * temporary directory and compiled with its own tsconfig plus a `paths` mapping of `ctrlmetrics` to this
 * repository's src/index.ts, so a renamed export or option breaks this test, not a user's first build.
 * Also checks the generated flags' defaults (the issue's list) by importing the generated src/flags.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { initProject } from '../../packages/cli/src/scaffold/init.js';

const ROOT = resolve(import.meta.dirname, '../..');
let work: string;
let app: string;

before(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'ctrlmetrics-typecheck-')));
  app = join(work, 'shop-op');
  await initProject({ projectName: 'shop-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
});
after(() => rmSync(work, { recursive: true, force: true }));

function tsc(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), ...args],
      { cwd, timeout: 120_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => res({ code: err ? 1 : 0, out: stdout + stderr }),
    );
  });
}

test("the generated src/ type-checks against this repository's sources (tsconfig paths: ctrlmetrics → packages/ctrlmetrics/src/index.ts)", async () => {
  writeFileSync(
    join(app, 'tsconfig.check.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      // the sources and the project's own e2e test (test/tsconfig.json compiles it the same way)
      include: ['src/**/*.ts', 'test/**/*.ts'],
      compilerOptions: {
        noEmit: true,
        rootDir: '/',
        baseUrl: '.',
        paths: {
          ctrlmetrics: [join(ROOT, 'packages/ctrlmetrics/src/index.ts')],
          '@ctrlmetrics/envtest': [join(ROOT, 'packages/envtest/src/index.ts')],
          'ctrlmetrics/*': [join(ROOT, 'packages/ctrlmetrics/src/exports/*.ts')],
        },
        typeRoots: [join(ROOT, 'node_modules/@types')],
        // the repository's own sources are compiled along; the generated files are held to these as well
        noUnusedLocals: true,
        noUnusedParameters: true,
      },
    }),
  );
  const r = await tsc(['-p', 'tsconfig.check.json', '--listFiles', '--pretty', 'false'], app);
  const files = r.out.split('\n').filter((l) => l.startsWith('/'));
  assert.ok(
    files.includes(join(ROOT, 'packages/ctrlmetrics/src/index.ts')),
    "ctrlmetrics resolved to this repository's sources",
  );
  for (const f of [
    'src/main.ts',
    'src/flags.ts',
    'src/controllers/configmap-controller.ts',
    'test/e2e/metrics.test.ts',
  ]) {
    assert.ok(files.includes(join(app, f)), `${f} compiled`);
  }
  // Errors inside this repository's files belong to the parts being written there; the generated ones are ours.
  const errors = r.out.split('\n').filter((l) => /error TS\d+/.test(l));
  const generated = errors.filter((l) => !resolve(app, l.split('(')[0]).startsWith(ROOT + '/'));
  assert.deepEqual(generated, [], `type errors in the generated project:\n${generated.join('\n')}`);
  assert.ok(relative(ROOT, app).startsWith('..'), 'the project was generated outside the repository');
});

test("the generated flags default to the issue's values and parse like Go flags", async () => {
  // src/flags.ts imports ctrlmetrics: resolve it to this repository's sources (tsx compiles them)
  const shim = join(app, 'node_modules/ctrlmetrics');
  mkdirSync(shim, { recursive: true });
  writeFileSync(
    join(shim, 'package.json'),
    JSON.stringify({ name: 'ctrlmetrics', type: 'module', exports: { '.': './index.ts', './log': './log.ts' } }),
  );
  writeFileSync(
    join(shim, 'index.ts'),
    `export * from ${JSON.stringify(join(ROOT, 'packages/ctrlmetrics/src/index.ts'))};\n`,
  );
  writeFileSync(
    join(shim, 'log.ts'),
    `export * from ${JSON.stringify(join(ROOT, 'packages/ctrlmetrics/src/exports/log.ts'))};\n`,
  );
  const { parseFlags } = (await import(pathToFileURL(join(app, 'src/flags.ts')).href)) as {
    parseFlags: (argv: string[]) => Record<string, unknown>;
  };
  assert.deepEqual(parseFlags([]), {
    metricsBindAddress: ':8443',
    metricsSecure: true,
    metricsCertPath: '',
    metricsCertName: 'tls.crt',
    metricsCertKey: 'tls.key',
    metricsStaticAuthConfig: '',
    metricsClientCa: '',
    enableHTTP2: false,
    healthProbeBindAddress: ':8081',
    leaderElect: false,
    leaderElectionNamespace: '',
    shardingRing: '',
    // kubebuilder v4's webhook certificate flags
    webhookCertPath: '',
    webhookCertName: 'tls.crt',
    webhookCertKey: 'tls.key',
    webhookPort: '9443',
    kubeconfig: '',
    log: {},
  });
  // outside a pod the Lease namespace has no default: the flag names it
  assert.equal(
    parseFlags(['--leader-elect', '--leader-election-namespace', 'p-system']).leaderElectionNamespace,
    'p-system',
  );
  assert.equal(parseFlags(['--leader-election-namespace=p-system']).leaderElectionNamespace, 'p-system');
  // the args config/default renders (manager_metrics_patch.yaml inserts --metrics-bind-address first)
  const deployed = parseFlags([
    '--metrics-bind-address=:8443',
    '--leader-elect',
    '--health-probe-bind-address=:8081',
    '--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs',
  ]);
  assert.equal(deployed.leaderElect, true);
  assert.equal(deployed.metricsCertPath, '/tmp/k8s-metrics-server/metrics-certs');
  // the args with sharding on (manager_sharding_patch.yaml appends; the kubelet expands $(SHARDING_RING))
  const shard = parseFlags([
    '--metrics-bind-address=:8443',
    '--leader-elect',
    '--health-probe-bind-address=:8081',
    '--leader-elect=false',
    '--sharding-ring=shop-op-controller-manager',
  ]);
  assert.equal(shard.leaderElect, false, 'the last --leader-elect wins, as in Go');
  assert.equal(shard.shardingRing, 'shop-op-controller-manager');
  // Static authorization rules for the filter, from a file
  assert.equal(
    parseFlags(['--metrics-static-auth-config', '/etc/metrics/static.yaml']).metricsStaticAuthConfig,
    '/etc/metrics/static.yaml',
  );
  assert.equal(
    parseFlags(['--metrics-client-ca=/etc/metrics/client-ca.crt']).metricsClientCa,
    '/etc/metrics/client-ca.crt',
  );
  const off = parseFlags(['--metrics-bind-address', '0', '--metrics-secure=false', '--enable-http2']);
  assert.equal(off.metricsBindAddress, '0');
  assert.equal(off.metricsSecure, false);
  assert.equal(off.enableHTTP2, true);
  assert.throws(() => parseFlags(['--metrics-secure=maybe']), /invalid boolean value "maybe" for --metrics-secure/);
  // Go's strconv.ParseBool forms
  for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True'])
    assert.equal(parseFlags([`--leader-elect=${t}`]).leaderElect, true, t);
  for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False'])
    assert.equal(parseFlags([`--leader-elect=${f}`, '--metrics-secure=' + f]).metricsSecure, false, f);
  assert.throws(() => parseFlags(['--leader-elect=tRuE']), /invalid boolean value "tRuE" for --leader-elect/);
  // controller-runtime's zap flags, in both Go forms
  assert.deepEqual(
    parseFlags([
      '--zap-log-level=debug',
      '--zap-devel',
      '--zap-encoder',
      'console',
      '--zap-stacktrace-level=panic',
      '--zap-time-encoding',
      'rfc3339nano',
    ]).log,
    {
      level: 'debug',
      development: true,
      encoder: 'console',
      stacktraceLevel: 'panic',
      timeEncoding: 'rfc3339nano',
    },
  );
  assert.deepEqual(parseFlags(['--zap-log-level', '3', '--zap-devel=false']).log, {
    level: 'debug',
    development: false,
  });
  assert.throws(
    () => parseFlags(['--zap-log-level=0']),
    /invalid log level "0": one of 'debug', 'info', 'error', 'panic', or an integer > 0/,
  );
  assert.throws(() => parseFlags(['--zap-encoder=text']), /invalid encoder "text": 'json' or 'console'/);
  assert.throws(() => parseFlags(['--zap-time-encoding=unix']), /invalid time encoding "unix"/);
  assert.throws(
    () => parseFlags(['--zap-stacktrace-level=debug']),
    /invalid stacktrace level "debug": one of 'info', 'error', 'panic'/,
  );
  assert.throws(() => parseFlags(['--zap-log-level']), /flag needs an argument: --zap-log-level/);
  assert.throws(() => parseFlags(['--metrics-bind']), /unknown flag --metrics-bind/);
  assert.throws(() => parseFlags(['--metrics-cert-path']), /flag needs an argument: --metrics-cert-path/);
});

test('the Deployment runs what the Dockerfile builds, as a non-root user on Node 24 LTS', () => {
  const dockerfile = readFileSync(join(app, 'Dockerfile'), 'utf8');
  const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  assert.equal(froms.length, 2, 'multi-stage');
  assert.equal(froms[0], 'node:24-slim');
  assert.match(dockerfile, /^FROM node:24-slim AS builder$/m);
  assert.equal(froms[1], 'gcr.io/distroless/nodejs24-debian12:nonroot');
  assert.match(dockerfile, /^USER 65532:65532$/m);
  const entry = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(dockerfile)![1]) as string[];
  const manager = readFileSync(join(app, 'config/manager/manager.yaml'), 'utf8');
  const command = /- command:\n((?:\s+- .*\n)+)/
    .exec(manager)![1]
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().slice(2));
  assert.deepEqual(
    command,
    entry,
    'the Deployment command is the image entrypoint (so patched args reach the manager)',
  );
  assert.match(dockerfile, /COPY --from=builder \/app\/dist \.\/dist/);
  assert.equal(entry[1], '/app/dist/main.js');
  const tsconfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8')) as {
    compilerOptions: { outDir: string; rootDir: string };
  };
  assert.deepEqual(
    [tsconfig.compilerOptions.rootDir, tsconfig.compilerOptions.outDir],
    ['src', 'dist'],
    'src/main.ts builds to dist/main.js',
  );
});
