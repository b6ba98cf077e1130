/**
 * The packages as a new user gets them: `npm pack` of each workspace package, then `npm install` of the tarballs and
 * prom-client into an empty project (from the npm cache `npm ci` filled where it can), then `npx ctrlmetrics demo`
 * from that project — its /metrics answers 200 to the reader token it wrote, with the example controllers' metrics —
 * and `npx ctrlmetrics init` there: the new project vendors the installed packages, installs them and its own
 * `npm test` passes.
 * Also what an operator's install holds: the runtime alone, with no package it does not run (no authority, CLI,
 * second YAML library or client-node, an optional peer) and at most 15 MB of node_modules besides prom-client.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, httpsGet } from '../controller/helpers/exposition.js';
import { run as runBounded } from '../helpers/process.js';
import { must, testSummary, userEnv } from '../helpers/project-run.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
let demo: ChildProcess | undefined;
after(async () => {
  if (demo && demo.exitCode === null && demo.signalCode === null) demo.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const SKIP = process.env.CTRLMETRICS_TEST_BUILT
  ? false
  : "packs the packages' dist/: run it through npm test or npm run test:e2e, which build dist/ first";

const promClient = async () =>
  (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
    .devDependencies['prom-client'];

/** Packs every workspace package into `dir`; the tarballs' paths by package name. */
async function packAll(dir: string): Promise<Record<string, string>> {
  const { stdout } = await run('npm', ['pack', '--workspaces', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    timeout: 180_000,
    maxBuffer: 64 << 20,
  });
  const packed = JSON.parse(stdout) as Array<{ name: string; filename: string }>;
  return Object.fromEntries(packed.map((p) => [p.name, join(dir, p.filename)]));
}

/** A fresh project in `dir` with `specs` installed as npm installs them (lifecycle scripts off). */
async function freshProject(dir: string, specs: string[]): Promise<void> {
  await run('mkdir', ['-p', dir]);
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'fresh-operator', version: '1.0.0', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', ...specs], {
    cwd: dir,
    timeout: 180_000,
    maxBuffer: 64 << 20,
  });
}

/** Bytes of the files under `dir` (symbolic links not followed). */
async function duBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  }
  return total;
}

/** The packages under node_modules (`name` or `@scope/name`), top level. */
async function installedPackages(project: string): Promise<string[]> {
  const top = await readdir(join(project, 'node_modules'));
  const out: string[] = [];
  for (const n of top) {
    if (n.startsWith('.')) continue;
    if (n.startsWith('@')) for (const s of await readdir(join(project, 'node_modules', n))) out.push(`${n}/${s}`);
    else out.push(n);
  }
  return out.sort();
}

test(
  "the runtime installs alone: no authority, CLI or second YAML library, ≤ 15 MB besides prom-client's",
  { skip: SKIP, timeout: 300_000 },
  async () => {
    const work = await mkdtemp(join(tmpdir(), 'ctrlmetrics-runtime-'));
    dirs.push(work);
    const tarballs = await packAll(work);
    assert.deepEqual(Object.keys(tarballs).sort(), ['@ctrlmetrics/cli', '@ctrlmetrics/envtest', 'ctrlmetrics']);
    const project = join(work, 'project');
    await freshProject(project, [tarballs.ctrlmetrics, `prom-client@${await promClient()}`]);
    const packages = await installedPackages(project);
    for (const absent of [
      '@ctrlmetrics/envtest',
      '@ctrlmetrics/cli',
      '@kubernetes/client-node',
      '@bufbuild/cel',
      '@peculiar/x509',
      'commander',
      'yaml',
    ])
      assert.ok(!packages.includes(absent), `${absent} is not installed with the runtime`);
    // prom-client and what it brings (its own dependencies) aside
    const promDeps = Object.keys(
      (
        JSON.parse(await readFile(join(project, 'node_modules/prom-client/package.json'), 'utf8')) as {
          dependencies?: Record<string, string>;
        }
      ).dependencies ?? {},
    );
    let bytes = 0;
    for (const p of packages.filter((n) => n !== 'prom-client' && !promDeps.includes(n)))
      bytes += await duBytes(join(project, 'node_modules', p));
    const mb = bytes / 1e6;
    console.log(`# the runtime's install: ${mb.toFixed(1)} MB in ${packages.length} packages (${packages.join(', ')})`);
    assert.ok(mb <= 15, `the runtime installs ${mb.toFixed(1)} MB besides prom-client (budget 15)`);
  },
);

test(
  'installed from the packed tarballs, `ctrlmetrics demo` serves authorized metrics and `init` makes a project whose tests pass',
  { skip: SKIP, timeout: 900_000 },
  async () => {
    const work = await mkdtemp(join(tmpdir(), 'ctrlmetrics-install-'));
    dirs.push(work);
    const tarballs = await packAll(work);
    const project = join(work, 'project');
    await freshProject(project, [...Object.values(tarballs), `prom-client@${await promClient()}`]);

    const installed = await installedPackages(project);
    assert.ok(
      ['ctrlmetrics', '@ctrlmetrics/envtest', '@ctrlmetrics/cli', 'prom-client'].every((p) => installed.includes(p)),
      installed.join(', '),
    );
    assert.ok(
      !installed.includes('@kubernetes/client-node'),
      'the optional peer @kubernetes/client-node is not installed',
    );

    const stateDir = join(work, 'state');
    demo = spawn(
      join(project, 'node_modules', '.bin', 'ctrlmetrics'),
      [
        'demo',
        '--state-dir',
        stateDir,
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--health-probe-bind-address',
        '127.0.0.1:0',
        '--load-interval',
        '0.3',
        '--duration',
        '120',
      ],
      {
        cwd: project,
        env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    demo.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    demo.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    // a demo that exits fails the test at once
    let exited!: (code: number | null) => void;
    const exit = new Promise<number | null>((r) => (exited = r));
    demo.once('exit', (code) => exited(code));
    const failed = exit.then((code) => Promise.reject(new Error(`demo exited ${code}: ${err}`)));
    failed.catch(() => undefined);
    const url = await Promise.race([
      eventually(
        () => /curl -k -H @\S+ (https:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(out)?.[1],
        "the demo's curl line",
        90_000,
        200,
      ),
      failed,
    ]);
    const token = (await readFile(join(stateDir, 'reader.token'), 'utf8')).trim();
    const body = await eventually(
      async () => {
        const r = await httpsGet(url, token);
        return r.status === 200 && /controller_runtime_reconcile_total\{controller="configmap"/.test(r.body)
          ? r.body
          : undefined;
      },
      "an authorized scrape with the example controllers' metrics",
      60_000,
      500,
    );
    assert.match(body, /^# HELP /m);
    const unauthorized = await httpsGet(url, undefined);
    assert.equal(unauthorized.status, 401, 'without the token: 401');
    demo.kill('SIGTERM');
    assert.equal(await exit, 0);

    // init from the installed CLI: it packs the installed packages into the new project's vendor/
    const app = join(work, 'app');
    await must(
      'ctrlmetrics init',
      runBounded(
        join(project, 'node_modules', '.bin', 'ctrlmetrics'),
        ['init', '--project-name', 'fresh-op', '--dir', app],
        {
          cwd: project,
          timeoutMs: 120_000,
        },
      ),
    );
    const { version } = JSON.parse(await readFile(join(ROOT, 'packages/ctrlmetrics/package.json'), 'utf8')) as {
      version: string;
    };
    assert.deepEqual(
      (await readdir(join(app, 'vendor'))).sort(),
      ['ctrlmetrics', 'ctrlmetrics-cli', 'ctrlmetrics-envtest'].map((n) => `${n}-${version}.tgz`),
    );
    await must(
      'npm install',
      runBounded('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, timeoutMs: 300_000 }),
    );
    // one runtime: the authority and the CLI use the project's, not a copy of their own
    const nested = ['@ctrlmetrics/envtest', '@ctrlmetrics/cli'].filter((p) =>
      existsSync(join(app, 'node_modules', p, 'node_modules', 'ctrlmetrics')),
    );
    assert.deepEqual(nested, []);
    const tested = await must('npm test', runBounded('npm', ['test'], { cwd: app, env: userEnv, timeoutMs: 300_000 }));
    assert.deepEqual(
      testSummary(tested.stdout),
      { tests: 3, pass: 3, fail: 0, cancelled: 0, skipped: 0, todo: 0 },
      tested.stdout.slice(-3000),
    );
  },
);
