/**
 * The packages as a user gets them: a fresh clone of this repository is built (`npm run build`) and each workspace
 * package packed with `npm pack`; the runtime's tarball holds the built library, its `.d.ts` and the LICENSE, the
 * CLI's the command and the demo's operator, envtest's the authority's data; a new consumer project installs them,
 * type-checks the README's library snippet with `strict` (and the packages' own declarations: no `skipLibCheck`),
 * and runs it against the packaged `ctrlmetrics authority`.
 *
 * The clone is of the committed HEAD: uncommitted changes are not in the packages.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup, ROOT, run } from '../helpers/process.js';
import { httpsGet } from '../controller/helpers/exposition.js';
import { asUserWrites } from '../docs/snippets.js';

const procs = new ProcessGroup();
const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-package-'));
after(async () => {
  await procs.stopAll();
  rmSync(work, { recursive: true, force: true });
});

const must = async (what: string, p: ReturnType<typeof run>) => {
  const r = await p;
  assert.equal(r.code, 0, `${what} failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  return r;
};

const rootVersion = (pkg: string) =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/** What each package's tarball must hold besides its package.json, README and LICENSE. */
const HOLDS: Record<string, string[]> = {
  ctrlmetrics: [
    'dist/src/index.js',
    'dist/src/index.d.ts',
    'dist/src/metrics/index.d.ts',
    'dist/src/exports/client.js',
  ],
  '@ctrlmetrics/envtest': [
    'dist/src/index.js',
    'dist/src/index.d.ts',
    'dist/src/data/openapi-v3.json.br',
    'dist/src/data/openapi-v2.json.br',
  ],
  '@ctrlmetrics/cli': ['dist/cli.js', 'dist/src/scaffold/index.d.ts', 'dist/examples/configmap-operator/operator.js'],
};

/**
 * The clone's node_modules: the build tools from this repository's (no network), the workspace packages linked to
 * the clone's own packages, as `npm ci` would lay them out there.
 */
function linkNodeModules(clone: string): void {
  const nm = join(clone, 'node_modules');
  mkdirSync(join(nm, '@ctrlmetrics'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'ctrlmetrics' || entry === '@ctrlmetrics') continue;
    symlinkSync(join(ROOT, 'node_modules', entry), join(nm, entry));
  }
  symlinkSync(join(clone, 'packages/ctrlmetrics'), join(nm, 'ctrlmetrics'));
  symlinkSync(join(clone, 'packages/envtest'), join(nm, '@ctrlmetrics/envtest'));
  symlinkSync(join(clone, 'packages/cli'), join(nm, '@ctrlmetrics/cli'));
}

test(
  'a fresh clone packs into complete packages that a strict TypeScript consumer installs, type-checks and runs',
  { timeout: 600_000 },
  async () => {
    const clone = join(work, 'clone');
    await must('git clone', run('git', ['clone', '--quiet', ROOT, clone], { timeoutMs: 60_000 }));
    linkNodeModules(clone);
    await must('npm run build', run('npm', ['run', 'build', '--loglevel=error'], { cwd: clone, timeoutMs: 300_000 }));
    const packs = join(work, 'packs');
    mkdirSync(packs);
    const packed = JSON.parse(
      (
        await must(
          'npm pack',
          run('npm', ['pack', '--workspaces', '--json', '--pack-destination', packs, '--loglevel=error'], {
            cwd: clone,
            timeoutMs: 240_000,
          }),
        )
      ).stdout,
    ) as Array<{ name: string; filename: string }>;
    const tarball = Object.fromEntries(packed.map((p) => [p.name, p.filename]));
    assert.deepEqual(Object.keys(tarball).sort(), Object.keys(HOLDS).sort(), 'npm pack wrote a tarball per package');

    for (const [name, holds] of Object.entries(HOLDS)) {
      const listing = (await must('tar', run('tar', ['-tzf', join(packs, tarball[name])]))).stdout
        .split('\n')
        .filter(Boolean);
      for (const f of ['package.json', 'README.md', 'LICENSE', ...holds])
        assert.ok(listing.includes(`package/${f}`), `${name} holds ${f}`);
      assert.ok(
        listing.every(
          (f) =>
            f.startsWith('package/dist/') ||
            ['package/package.json', 'package/README.md', 'package/LICENSE'].includes(f),
        ),
        `${name}: nothing but dist/, the README, the LICENSE and package.json`,
      );
      // of the examples, only the operator `ctrlmetrics demo` runs
      const example = (f: string) =>
        f.startsWith('package/dist/examples/') && !f.startsWith('package/dist/examples/configmap-operator/');
      assert.ok(
        !listing.some((f) => f.includes('/test/') || f.endsWith('.map') || example(f)),
        `${name}: no tests, source maps or examples but the demo's`,
      );
    }
    assert.match(readFileSync(join(clone, 'packages/ctrlmetrics/LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);

    const consumer = join(work, 'consumer');
    mkdirSync(join(consumer, 'src'), { recursive: true });
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({
        name: 'strict-consumer',
        private: true,
        type: 'module',
        // the user's own prom-client is 14.x: the peer dependency lets ctrlmetrics use that very copy
        dependencies: { ctrlmetrics: `file:../packs/${tarball.ctrlmetrics}`, 'prom-client': '^14.2.0' },
        devDependencies: {
          '@ctrlmetrics/cli': `file:../packs/${tarball['@ctrlmetrics/cli']}`,
          '@ctrlmetrics/envtest': `file:../packs/${tarball['@ctrlmetrics/envtest']}`,
          '@types/node': rootVersion('@types/node'),
          typescript: rootVersion('typescript'),
        },
      }),
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          outDir: 'out',
          rootDir: 'src',
          skipLibCheck: false,
          noEmitOnError: true,
        },
        include: ['src'],
      }),
    );
    // the README's snippet (examples/quickstart.ts) as a user writes it: importing the package by its name
    // plus a metric made with the user's own prom-client
    const snippet =
      "import { Counter } from 'prom-client';\nnew Counter({ name: 'consumer_own_jobs_total', help: 'Jobs counted with the consumer’s prom-client.' }).inc(2);\n" +
      asUserWrites(readFileSync(join(ROOT, 'examples', 'quickstart.ts'), 'utf8'));
    assert.match(snippet, /from 'ctrlmetrics'/);
    writeFileSync(join(consumer, 'src', 'index.ts'), snippet);
    // the declarations are real types, not `any`: a wrong option is a type error
    writeFileSync(
      join(consumer, 'src', 'types.ts'),
      "import { Manager } from 'ctrlmetrics';\n// @ts-expect-error leaderElection is a boolean\nexport const wrong = new Manager({ leaderElection: 'yes' });\n",
    );
    await must(
      'npm install',
      run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: consumer,
        timeoutMs: 300_000,
      }),
    );
    await must(
      'tsc (strict, no skipLibCheck)',
      run(join(consumer, 'node_modules', '.bin', 'tsc'), ['-p', '.'], { cwd: consumer, timeoutMs: 120_000 }),
    );

    const stateDir = join(work, 'state');
    const kubeconfig = join(work, 'kubeconfig');
    const authority = procs.start(
      'authority',
      join(consumer, 'node_modules', '.bin', 'ctrlmetrics'),
      ['authority', '--listen', '127.0.0.1:0', '--state-dir', stateDir, '--kubeconfig-out', kubeconfig],
      { cwd: consumer },
    );
    await authority.waitForOutput(/"msg":"authority ready"/, 60_000);
    const op = procs.start('consumer', process.execPath, [join(consumer, 'out', 'index.js')], {
      cwd: consumer,
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        METRICS_BIND_ADDRESS: '127.0.0.1:0',
        HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
      },
    });
    const m = await op.waitForOutput(
      /"msg":"Serving metrics server"[^\n]*"url":"(https:\/\/127\.0\.0\.1:\d+)"/,
      60_000,
    );
    assert.equal((await httpsGet(`${m[1]}/metrics`)).status, 401, 'the packaged filter guards /metrics');
    // a reader as the README's users make one: a ClusterRole for GET /metrics, a service account, the packaged grant and token
    const env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(work, 'kcache') };
    await must(
      'kubectl create clusterrole',
      run('kubectl', ['create', 'clusterrole', 'metrics-reader', '--verb=get', '--non-resource-url=/metrics'], { env }),
    );
    await must('kubectl create sa', run('kubectl', ['create', 'serviceaccount', 'scraper', '-n', 'default'], { env }));
    const cli = join(consumer, 'node_modules', '.bin', 'ctrlmetrics');
    await must(
      'ctrlmetrics grant',
      run(cli, ['grant', '--serviceaccount', 'default:scraper', '--clusterrole', 'metrics-reader'], {
        env,
        cwd: consumer,
      }),
    );
    const token = (
      await must('ctrlmetrics token', run(cli, ['token', '--namespace', 'default', 'scraper'], { env, cwd: consumer }))
    ).stdout.trim();
    const scrape = await httpsGet(`${m[1]}/metrics`, token);
    assert.equal(scrape.status, 200, scrape.body.slice(0, 500));
    assert.match(scrape.body, /^consumer_own_jobs_total 2$/m, "the consumer's prom-client 14 metric is served");
    assert.match(scrape.body, /^controller_runtime_reconcile_total\{/m);
    assert.match(
      readFileSync(join(consumer, 'node_modules', 'prom-client', 'package.json'), 'utf8'),
      /"version": "14\./,
    );
    op.child.kill('SIGTERM');
    assert.equal(await op.exited, 0);

    // generate, from the installed package with the consumer's own typescript: the example's API and markers
    mkdirSync(join(consumer, 'api', 'v1alpha1'), { recursive: true });
    writeFileSync(
      join(consumer, 'api', 'v1alpha1', 'memcached.ts'),
      asUserWrites(readFileSync(join(ROOT, 'examples', 'memcached-operator', 'api.ts'), 'utf8')),
    );
    const generated = await must(
      'ctrlmetrics generate crd',
      run(cli, ['generate', 'crd', '--paths', 'api/...'], { cwd: consumer }),
    );
    assert.equal(generated.stdout, 'config/crd/bases/cache.example.com_memcacheds.yaml written\n');
    assert.equal(
      readFileSync(join(consumer, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'), 'utf8'),
      readFileSync(
        join(ROOT, 'examples', 'memcached-operator', 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'),
        'utf8',
      ),
      'the installed generator writes what the repository generates',
    );
  },
);
