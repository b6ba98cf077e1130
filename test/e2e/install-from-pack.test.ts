/**
 * The package as a new user gets it: `npm pack`, then `npm install` of the tarball and prom-client into an empty
 * project (from the npm cache `npm ci` filled where it can), then `npx ctrlmetrics demo` from that project — its
 * /metrics answers 200 to the reader token it wrote, with the example controllers' metrics. Also what the install
 * holds: no package an operator does not run (@kubernetes/client-node is an optional peer).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, httpsGet } from '../controller/helpers/exposition.js';

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
  : 'packs dist/: run it through npm test or npm run test:e2e, which build dist/ first';

test(
  'installed from its packed tarball, `ctrlmetrics demo` serves authorized metrics',
  { skip: SKIP, timeout: 240_000 },
  async () => {
    const work = await mkdtemp(join(tmpdir(), 'ctrlmetrics-install-'));
    dirs.push(work);
    const { stdout: packed } = await run('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: ROOT,
      timeout: 120_000,
      maxBuffer: 64 << 20,
    });
    const tarball = join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0].filename);
    const project = join(work, 'project');
    await run('mkdir', ['-p', project]);
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'fresh-operator', version: '1.0.0', private: true, type: 'module' }),
    );
    const promClient = (
      JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
    ).devDependencies['prom-client'];
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        tarball,
        `prom-client@${promClient}`,
      ],
      { cwd: project, timeout: 180_000, maxBuffer: 64 << 20 },
    );

    const installed = await readdir(join(project, 'node_modules'));
    assert.ok(installed.includes('ctrlmetrics') && installed.includes('prom-client'));
    assert.ok(
      !(await readdir(join(project, 'node_modules', '@kubernetes')).catch(() => [] as string[])).includes(
        'client-node',
      ),
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
  },
);
