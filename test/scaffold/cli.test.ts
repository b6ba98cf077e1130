/**
 * `ctrlmetrics init` and `ctrlmetrics edit` through the real CLI (child processes): bad input gives a non-zero exit,
 * one `error:` line and nothing written; existing projects are not overwritten without --force; edits are
 * idempotent and keep the user's own comments and entries.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { initProject, ScaffoldError, type InitOptions } from '../../packages/cli/src/scaffold/init.js';
import { editProject, readOptionState as readOptionStateOf } from '../../packages/cli/src/scaffold/edit.js';
import { cliArgs } from '../helpers/process.js';

const ROOT = resolve(import.meta.dirname, '../..');
let work: string;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-cli-'));
});
after(() => rmSync(work, { recursive: true, force: true }));

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runWithEnv(process.env, ...args);
}

function runWithEnv(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    execFile(process.execPath, [...cliArgs(), ...args], { cwd: ROOT, timeout: 60_000, env }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      resolveRun({ code, stdout, stderr });
    });
  });
}

function assertOneErrorLine(r: { code: number; stderr: string }, pattern: RegExp): void {
  assert.notEqual(r.code, 0, 'non-zero exit');
  // usage errors end with kubectl's hint line
  const lines = r.stderr
    .trimEnd()
    .split('\n')
    .filter((l) => !/^See 'ctrlmetrics [a-z-]+ --help' for usage\.$/.test(l));
  assert.equal(lines.length, 1, `one error line, got: ${r.stderr}`);
  assert.match(lines[0], /^error: /);
  assert.match(lines[0], pattern);
}

test('init rejects invalid project names and domains with one error line and writes nothing', async () => {
  // through the CLI process: exit code and the one stderr line
  for (const [args, pattern] of [
    [['--project-name', 'My_Operator'], /DNS-1123/],
    [['--project-name', 'ok', '--domain', 'Bad_Domain'], /invalid domain/],
  ] as Array<[string[], RegExp]>) {
    const dir = join(work, `bad-cli-${args.length}`);
    assertOneErrorLine(await run('init', ...args, '--dir', dir), pattern);
    assert.equal(existsSync(dir), false, `nothing written for ${args.join(' ')}`);
  }
  // the other rules through the same function the command calls (one process per case would only add seconds)
  const cases: Array<[InitOptions, RegExp]> = [
    [{ projectName: '' }, /project name is empty: pass --project-name/],
    [{ projectName: '-leading-dash' }, /DNS-1123/],
    [{ projectName: 'trailing-' }, /DNS-1123/],
    [{ projectName: 'Upper' }, /DNS-1123/],
    [{ projectName: 'dots.not.allowed' }, /DNS-1123/],
    [{ projectName: '9starts-with-digit' }, /start with a letter/],
    [{ projectName: 'a'.repeat(29) }, /at most 28 characters/],
    [{ projectName: 'ok', domain: 'Bad_Domain' }, /invalid domain "Bad_Domain"/],
    [{ projectName: 'ok', domain: '' }, /invalid domain/],
    [{ projectName: 'ok', domain: 'a..b' }, /invalid domain/],
  ];
  for (const [opts, pattern] of cases) {
    const dir = join(work, `bad-api-${opts.projectName.slice(0, 12)}-${opts.domain ?? ''}`);
    await assert.rejects(
      initProject({ ...opts, dir }),
      (err: Error) => err instanceof ScaffoldError && pattern.test(err.message) && !err.message.includes('\n'),
    );
    assert.equal(existsSync(dir), false, `nothing written for ${JSON.stringify(opts)}`);
  }
  const longest = join(work, 'longest');
  await initProject({ projectName: 'a'.repeat(28), dir: longest });
  assert.ok(existsSync(join(longest, 'config/default/kustomization.yaml')), '28 characters are accepted');
});

test('init with no --ctrlmetrics-version packs the running packages into vendor/ and depends on them as file:vendor/…', async () => {
  const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const dir = join(work, 'vendored');
  const r = await run('init', '--project-name', 'shop-op', '--dir', dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /next: cd .* && npm install && npm test/);
  const tgz = (name: string) => `vendor/${name}-${own.version}.tgz`;
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  // the runtime is the one dependency the image keeps; the CLI and the authority are dev dependencies
  assert.deepEqual(pkg.dependencies, { ctrlmetrics: `file:${tgz('ctrlmetrics')}` });
  assert.equal(pkg.devDependencies['@ctrlmetrics/cli'], `file:${tgz('ctrlmetrics-cli')}`);
  assert.equal(pkg.devDependencies['@ctrlmetrics/envtest'], `file:${tgz('ctrlmetrics-envtest')}`);
  // each tarball is what npm would publish: the built package, its manifest, no sources or tests
  const expected: Record<string, { name: string; files: string[] }> = {
    ctrlmetrics: { name: 'ctrlmetrics', files: ['package/dist/src/index.js', 'package/dist/src/index.d.ts'] },
    'ctrlmetrics-envtest': {
      name: '@ctrlmetrics/envtest',
      files: ['package/dist/src/index.js', 'package/dist/src/data/openapi-v3.json.br'],
    },
    'ctrlmetrics-cli': {
      name: '@ctrlmetrics/cli',
      files: ['package/dist/cli.js', 'package/dist/src/scaffold/index.js'],
    },
  };
  for (const [file, { name, files }] of Object.entries(expected)) {
    const listing = await new Promise<string>((res, rej) =>
      execFile('tar', ['-tzf', join(dir, tgz(file))], (err, stdout) => (err ? rej(err) : res(stdout))),
    );
    const entries = listing.split('\n').filter(Boolean);
    for (const f of ['package/package.json', 'package/LICENSE', ...files])
      assert.ok(entries.includes(f), `${f} packed in ${file}`);
    assert.deepEqual(
      entries.filter((e) => /^package\/(src|test|bench)\//.test(e) || e.endsWith('.map')),
      [],
      'no sources, tests or source maps',
    );
    const manifest = await new Promise<string>((res, rej) =>
      execFile('tar', ['-xzOf', join(dir, tgz(file)), 'package/package.json'], (err, stdout) =>
        err ? rej(err) : res(stdout),
      ),
    );
    const m = JSON.parse(manifest) as { name: string; version: string };
    assert.deepEqual([m.name, m.version], [name, own.version]);
  }
  // npm ci in the image's build stage reads the tarball, so it is copied before npm ci runs
  const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
  assert.ok(
    dockerfile.indexOf('COPY vendor ./vendor\n') > 0 &&
      dockerfile.indexOf('COPY vendor ./vendor\n') < dockerfile.indexOf('\nRUN '),
    dockerfile,
  );

  // a registry or git spec: used as given, nothing vendored
  const pinned = join(work, 'pinned');
  assert.equal(
    (await run('init', '--project-name', 'shop-op', '--dir', pinned, '--ctrlmetrics-version', '~0.1.0')).code,
    0,
  );
  const pinnedPkg = JSON.parse(readFileSync(join(pinned, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  assert.deepEqual(
    [
      pinnedPkg.dependencies.ctrlmetrics,
      pinnedPkg.devDependencies['@ctrlmetrics/cli'],
      pinnedPkg.devDependencies['@ctrlmetrics/envtest'],
    ],
    ['~0.1.0', '~0.1.0', '~0.1.0'],
  );
  assert.equal(existsSync(join(pinned, 'vendor')), false);
  assert.doesNotMatch(readFileSync(join(pinned, 'Dockerfile'), 'utf8'), /vendor/);
});

test('init without npm on PATH says to pass --ctrlmetrics-version and writes nothing', async () => {
  const dir = join(work, 'no-npm');
  // PATH without npm (node itself is started by its absolute path)
  const r = await runWithEnv(
    { ...process.env, PATH: join(work, 'empty-bin') },
    'init',
    '--project-name',
    'demo',
    '--dir',
    dir,
  );
  assertOneErrorLine(r, /npm is not on PATH.*--ctrlmetrics-version <spec>/);
  assert.equal(existsSync(dir), false);
  assert.deepEqual(
    readdirSync(work).filter((n) => n.includes('ctrlmetrics-init')),
    [],
    'no staging directory left behind',
  );
});

test('init into an unwritable location fails with one clear line and leaves nothing behind', async () => {
  const r1 = await run('init', '--project-name', 'demo', '--dir', '/sys/ctrlmetrics-scaffold-test/demo');
  assertOneErrorLine(r1, /cannot write the project to \/sys\/ctrlmetrics-scaffold-test\/demo: (permission denied|.*)/);
  assert.equal(existsSync('/sys/ctrlmetrics-scaffold-test'), false);

  const file = join(work, 'a-file');
  writeFileSync(file, 'not a directory');
  await assert.rejects(
    initProject({ projectName: 'demo', dir: join(file, 'demo') }),
    /cannot write the project to .*a parent path is not a directory/,
  );
  await assert.rejects(initProject({ projectName: 'demo', dir: file }), /it exists and is not a directory/);
  assert.equal(readFileSync(file, 'utf8'), 'not a directory');
  assert.deepEqual(
    readdirSync(work).filter((n) => n.includes('ctrlmetrics-init')),
    [],
    'no staging directory left behind',
  );
});

test('init generates the project, refuses to overwrite it without --force, overwrites with --force', async () => {
  const dir = join(work, 'proj');
  const r = await run(
    'init',
    '--project-name',
    'shop-op',
    '--domain',
    'example.com',
    '--dir',
    dir,
    '--ctrlmetrics-version',
    `file:${ROOT}`,
  );
  assert.equal(r.code, 0, r.stderr);
  for (const f of [
    'package.json',
    'tsconfig.json',
    'src/main.ts',
    'Dockerfile',
    'README.md',
    'config/default/kustomization.yaml',
    'config/default/metrics_service.yaml',
    'config/default/manager_metrics_patch.yaml',
    'config/default/cert_metrics_manager_patch.yaml',
    'config/rbac/service_account.yaml',
    'config/rbac/role.yaml',
    'config/rbac/role_binding.yaml',
    'config/rbac/leader_election_role.yaml',
    'config/rbac/leader_election_role_binding.yaml',
    'config/rbac/metrics_auth_role.yaml',
    'config/rbac/metrics_auth_role_binding.yaml',
    'config/rbac/metrics_reader_role.yaml',
    'config/rbac/kustomization.yaml',
    'config/manager/manager.yaml',
    'config/manager/kustomization.yaml',
    'config/prometheus/monitor.yaml',
    'config/prometheus/monitor_tls_patch.yaml',
    'config/prometheus/kustomization.yaml',
    'config/certmanager/issuer.yaml',
    'config/certmanager/certificate-metrics.yaml',
    'config/certmanager/kustomization.yaml',
    'config/certmanager/kustomizeconfig.yaml',
    'config/network-policy/allow-metrics-traffic.yaml',
    'config/network-policy/allow-webhook-traffic.yaml',
    'config/network-policy/kustomization.yaml',
    'config/grafana/kustomization.yaml',
  ]) {
    assert.ok(existsSync(join(dir, f)), `${f} generated`);
  }
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies: Record<string, string>;
  };
  assert.equal(pkg.name, 'shop-op');
  assert.equal(pkg.dependencies.ctrlmetrics, `file:${ROOT}`);
  const kust = readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8');
  for (const marker of [
    '[PROMETHEUS]',
    '[METRICS]',
    '[METRICS-WITH-CERTS]',
    '[PROMETHEUS-WITH-CERTS]',
    '[CERTMANAGER]',
    '[NETWORK POLICY]',
  ]) {
    assert.ok(kust.includes(marker), `section marker ${marker} kept`);
  }
  assert.match(kust, /^namespace: shop-op-system$/m);
  assert.match(kust, /^namePrefix: shop-op-$/m);
  // webhook NetworkPolicy: pod port 9443 from all sources (kubebuilder #5906 fixed)
  const webhookNp = readFileSync(join(dir, 'config/network-policy/allow-webhook-traffic.yaml'), 'utf8');
  assert.match(webhookNp, /- ports:\n\s+- port: 9443/);
  assert.doesNotMatch(webhookNp, /namespaceSelector:|port: 443\b/);
  const readme = readFileSync(join(dir, 'README.md'), 'utf8');
  assert.match(readme, /limits addresses and ports; it authenticates nobody/);
  assert.match(readme, /namespaceSelector` on a webhook configuration restricts[^.]*not network traffic/);

  writeFileSync(join(dir, 'src/main.ts'), '// my own code\n');
  await assert.rejects(initProject({ projectName: 'shop-op', dir }), /already contains a project.*--force/);
  assert.equal(readFileSync(join(dir, 'src/main.ts'), 'utf8'), '// my own code\n');

  writeFileSync(join(dir, 'NOTES.md'), 'keep me\n');
  const forced = await run('init', '--project-name', 'shop-op', '--dir', dir, '--force');
  assert.equal(forced.code, 0, forced.stderr);
  assert.notEqual(readFileSync(join(dir, 'src/main.ts'), 'utf8'), '// my own code\n');
  assert.equal(readFileSync(join(dir, 'NOTES.md'), 'utf8'), 'keep me\n', 'files init does not generate are left alone');
});

test('edit: unknown option or missing project fails with one line and changes nothing', async () => {
  const dir = join(work, 'edit-bad');
  await initProject({ projectName: 'demo', dir });
  const before = readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8');
  assertOneErrorLine(
    await run('edit', '--enable', 'prometheus,webhooks', '--dir', dir),
    /unknown option "webhooks".*choose from prometheus, certmanager, metrics-tls, network-policy, grafana/,
  );
  assertOneErrorLine(await run('edit', '--dir', dir), /nothing to do/);
  await assert.rejects(
    editProject(dir, { enable: ['grafana'], disable: ['grafana'] }),
    /both enable and disable grafana/,
  );
  // an option turned on along with another one is as contradictory to disable in the same request
  const promBefore = readFileSync(join(dir, 'config/prometheus/kustomization.yaml'), 'utf8');
  const implicit = await run('edit', '--enable', 'metrics-tls', '--disable', 'prometheus', '--dir', dir);
  assert.equal(implicit.code, 1);
  assertOneErrorLine(
    implicit,
    /cannot enable metrics-tls and disable prometheus: metrics-tls needs prometheus; nothing was written/,
  );
  assertOneErrorLine(
    await run('edit', '--enable', 'metrics-tls', '--disable', 'certmanager', '--dir', dir),
    /metrics-tls needs certmanager/,
  );
  assert.equal(readFileSync(join(dir, 'config/prometheus/kustomization.yaml'), 'utf8'), promBefore);
  assert.equal(readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8'), before);
  await assert.rejects(editProject(join(work, 'nowhere'), { enable: ['prometheus'] }), /not a ctrlmetrics project/);
});

test('edit refuses a result that kubectl kustomize cannot build, and puts the files back', async () => {
  const dir = join(work, 'edit-unbuildable');
  await initProject({ projectName: 'demo', dir });
  // the user's ServiceMonitor overlay lists a file that is not there: enabling prometheus would break the build
  const promFile = join(dir, 'config/prometheus/kustomization.yaml');
  writeFileSync(
    promFile,
    readFileSync(promFile, 'utf8').replace('- monitor.yaml\n', '- monitor.yaml\n- missing-monitor.yaml\n'),
  );
  const before = [readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8'), readFileSync(promFile, 'utf8')];
  const r = await run('edit', '--enable', 'prometheus', '--dir', dir);
  assert.equal(r.code, 1);
  assertOneErrorLine(
    r,
    /the edited config\/default does not build with kubectl kustomize \(.*missing-monitor\.yaml.*\); nothing was changed/,
  );
  assert.deepEqual(
    [readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8'), readFileSync(promFile, 'utf8')],
    before,
  );
  // once the file exists, the same edit builds and is kept
  writeFileSync(
    join(dir, 'config/prometheus/missing-monitor.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-monitor-settings\n',
  );
  const ok = await run('edit', '--enable', 'prometheus', '--dir', dir);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(readOptionStateOf(dir).prometheus, true);
});

test("edit is idempotent and keeps the user's comments and entries; metrics-tls says it enabled prometheus", async () => {
  const dir = join(work, 'edit-user');
  await initProject({ projectName: 'demo', dir });
  const file = join(dir, 'config/default/kustomization.yaml');
  // the user's own additions: a comment, a resource, a label block
  const userText = readFileSync(file, 'utf8')
    .replace('- ../manager\n', '- ../manager\n# my team: extra objects below\n- extra.yaml\n')
    .replace('namePrefix: demo-\n', 'namePrefix: demo-\n# keep this note, says the user\n');
  writeFileSync(file, userText);
  writeFileSync(join(dir, 'config/default/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n');

  const first = await run('edit', '--enable', 'metrics-tls', '--dir', dir);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /enabled prometheus too/);
  assert.match(first.stdout, /enabled certmanager too/);
  const afterFirst = readFileSync(file, 'utf8');
  const promAfterFirst = readFileSync(join(dir, 'config/prometheus/kustomization.yaml'), 'utf8');

  const second = await run('edit', '--enable', 'metrics-tls', '--dir', dir);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /metrics-tls is already enabled/);
  assert.match(second.stdout, /no changes/);
  assert.equal(readFileSync(file, 'utf8'), afterFirst, 'second enable changes nothing');
  assert.equal(readFileSync(join(dir, 'config/prometheus/kustomization.yaml'), 'utf8'), promAfterFirst);

  for (const text of [afterFirst]) {
    assert.ok(text.includes('# my team: extra objects below\n- extra.yaml'), 'user comment and entry kept');
    assert.ok(text.includes('# keep this note, says the user'), 'user note kept');
    assert.ok(text.includes('[METRICS-WITH-CERTS]') && text.includes('[PROMETHEUS]'), 'section markers kept');
  }

  const off = await run(
    'edit',
    '--disable',
    'metrics-tls',
    '--disable',
    'prometheus',
    '--disable',
    'certmanager',
    '--dir',
    dir,
  );
  assert.equal(off.code, 0, off.stderr);
  const afterOff = readFileSync(file, 'utf8');
  assert.ok(afterOff.includes('# my team: extra objects below\n- extra.yaml'));
  assert.ok(afterOff.includes('# keep this note, says the user'));
  assert.match(afterOff, /^#- \.\.\/prometheus$/m, 'disabled entry kept as a commented-out line');
  assert.match(afterOff, /^#- path: cert_metrics_manager_patch\.yaml$/m);
  const offAgain = await editProject(dir, { disable: ['metrics-tls'] });
  assert.deepEqual(offAgain, { messages: ['metrics-tls is already disabled'], changed: [] });
  assert.equal(readFileSync(file, 'utf8'), afterOff);
});
