/**
 * kubebuilder's first steps with ctrlmetrics: `init`, `create api` (two kinds in one group; a second group is
 * refused), `create webhook --defaulting --programmatic-validation`, a second version of one kind with
 * `create webhook --conversion`, `npm install`, then the project's own `npm test` (the metrics e2e test, each
 * generated controller test, which creates its sample on the authority and sees it reconciled, the webhook test,
 * the authority calling the webhooks, and the conversion test, the authority converting through the manager),
 * `npm run build` under strict, `npm run manifests` leaving the generated files as they are, and
 * `kubectl kustomize config/default` with every `edit` option on and off; `USE_EXISTING_CLUSTER=true npm test` on
 * another API server reached through KUBECONFIG, left as it was after; then the built manager serving its
 * webhooks and conversion to the authority, counted on /metrics.
 *
 * Needs the npm registry (the project's dependencies other than ctrlmetrics) and `npm run build` done first.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeApiError, KubeClient } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/controller/types.js';
import { installWebhooks, startAuthority } from '../../src/authority/index.js';
import { ProcessGroup, ROOT, eventually, freePort, run } from '../helpers/process.js';
import { must, testSummary, userEnv } from '../helpers/project-run.js';

const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-create-api-e2e-'));
after(() => rmSync(work, { recursive: true, force: true }));
const project = join(work, 'crew-op');
const cli = (args: string[]) => run(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd: project, timeoutMs: 180_000 });


test('init → create api ×2 → npm install → npm test, build, manifests and kustomize all pass', { timeout: 900_000 }, async () => {
  assert.ok(existsSync(join(ROOT, 'dist/cli.js')), 'run npm run build first (npm test does)');
  await must('ctrlmetrics init', run(process.execPath, [join(ROOT, 'dist/cli.js'), 'init', '--project-name', 'crew-op', '--domain', 'example.org', '--dir', project], { timeoutMs: 120_000 }));
  await must('create api Captain', cli(['create', 'api', '--group', 'crew', '--version', 'v1', '--kind', 'Captain']));
  await must('create api Ship', cli(['create', 'api', '--group', 'crew', '--version', 'v1alpha1', '--kind', 'Ship', '--namespaced=false']));
  await must('create webhook Captain', cli(['create', 'webhook', '--group', 'crew', '--version', 'v1', '--kind', 'Captain', '--defaulting', '--programmatic-validation']));
  // Ship grows a version: v1 is the hub its conversion webhook converts v1alpha1 to and from
  await must('create api Ship v1', cli(['create', 'api', '--group', 'crew', '--version', 'v1', '--kind', 'Ship', '--namespaced=false', '--controller=false']));
  await must('create webhook Ship --conversion', cli(['create', 'webhook', '--group', 'crew', '--version', 'v1', '--kind', 'Ship', '--conversion']));
  const other = await cli(['create', 'api', '--group', 'fleet', '--version', 'v1', '--kind', 'Port']);
  assert.equal(other.code, 1);
  assert.equal(other.stderr, 'error: multiple groups are not allowed by default, to enable multi-group visit https://kubebuilder.io/migration/multi-group.html\n');

  await must('npm install', run('npm', ['install', '--no-audit', '--no-fund'], { cwd: project, timeoutMs: 300_000 }));
  const tested = await must('npm test', run('npm', ['test'], { cwd: project, env: userEnv, timeoutMs: 400_000 }));
  assert.deepEqual(testSummary(tested.stdout), { tests: 8, pass: 8, fail: 0, cancelled: 0, skipped: 0, todo: 0 }, tested.stdout.slice(-3000));
  for (const name of [
    'the sample Captain is reconciled',
    'the sample Ship is reconciled',
    'the defaulter fills spec.foo when it is unset',
    'the validator refuses a spec.foo that is too long, with its message',
    'a Ship written in v1alpha1 is stored in v1 and reads back the same in v1alpha1',
  ]) {
    assert.ok(tested.stdout.split('\n').some((l) => /^ok \d+ - /.test(l) && l.endsWith(` - ${name}`)), `passed: ${name}`);
  }

  // npm run manifests (kubebuilder's make manifests) with the installed ctrlmetrics: the files create api wrote stay
  const crdFile = join(project, 'config/crd/bases/crew.example.org_captains.yaml');
  const before = readFileSync(crdFile, 'utf8');
  const manifests = await must('npm run manifests', run('npm', ['run', 'manifests'], { cwd: project, env: userEnv, timeoutMs: 120_000 }));
  assert.match(manifests.stdout, /config\/crd\/bases\/crew\.example\.org_captains\.yaml unchanged/);
  assert.equal(readFileSync(crdFile, 'utf8'), before);

  // every optional part on, then off (but cert-manager, which the webhooks' certificate needs): config/default
  // (with the CRDs and the webhooks) still builds
  const options = ['prometheus', 'certmanager', 'metrics-tls', 'network-policy', 'grafana'];
  for (const step of [['--enable', options.join(',')], ['--disable', options.filter((o) => o !== 'certmanager').join(',')]]) {
    await must(`edit ${step.join(' ')}`, cli(['edit', ...step]));
    const built = await must('kubectl kustomize config/default', run('kubectl', ['kustomize', join(project, 'config/default')], { timeoutMs: 60_000 }));
    assert.match(built.stdout, /^ {2}name: captains\.crew\.example\.org$/m);
    assert.match(built.stdout, /^ {2}name: ships\.crew\.example\.org$/m);
    assert.equal(/kind: ServiceMonitor/.test(built.stdout), step[0] === '--enable', `ServiceMonitor ${step[0]}d`);
    assert.match(built.stdout, /cert-manager\.io\/inject-ca-from: crew-op-system\/crew-op-serving-cert/);
  }
});

test("USE_EXISTING_CLUSTER=true npm test: the controller and webhook tests on the cluster of KUBECONFIG, which is left as it was", { timeout: 600_000 }, async () => {
  assert.ok(existsSync(join(project, 'node_modules')), 'the first test installed the project');
  // a cluster the user already has, reached only through its kubeconfig (an authority of its own stands in for it)
  const cluster = await startAuthority({});
  const admin = new KubeClient(cluster.restConfig);
  const collections = [
    '/api/v1/namespaces',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  ];
  const inventory = async () => {
    const out: string[] = [];
    for (const c of collections) for (const o of (await admin.get<{ items: Array<{ metadata: { name: string } }> }>(c)).items) out.push(`${c}/${o.metadata.name}`);
    return out.sort();
  };
  try {
    const before = await inventory();
    // what the cluster served while the tests ran (watched): the project's CRDs and its webhook configurations
    const seen = new Set<string>();
    const informers = collections.slice(1).map((path) => {
      const inf = new Informer<KubeObject>(admin, { path });
      inf.addHandler({ onAdd: (o) => seen.add(`${path}/${String(o.metadata?.name).replace(/^envtest-[0-9a-f]{6}-/, 'envtest-<id>-')}`) });
      inf.start();
      return inf;
    });
    for (const inf of informers) assert.equal(await inf.waitForSync(10_000), true);
    const env = { ...userEnv, USE_EXISTING_CLUSTER: 'true', KUBECONFIG: cluster.kubeconfig };
    const tested = await run('npm', ['test'], { cwd: project, env, timeoutMs: 400_000 });
    await new Promise((r) => setTimeout(r, 200));
    await Promise.all(informers.map((inf) => inf.stop()));
    assert.equal(tested.code, 0, tested.stdout.slice(-3000) + tested.stderr.slice(-2000));
    assert.deepEqual(testSummary(tested.stdout), { tests: 8, pass: 8, fail: 0, cancelled: 0, skipped: 0, todo: 0 }, tested.stdout.slice(-3000));
    for (const name of [
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/captains.crew.example.org',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ships.crew.example.org',
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/envtest-<id>-mutating-webhook-configuration',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/envtest-<id>-validating-webhook-configuration',
    ]) {
      assert.ok(seen.has(name), `the cluster held ${name} during the tests: ${[...seen].join(', ')}`);
    }
    assert.deepEqual(await inventory(), before, 'the CRDs (with their objects) and the webhook configurations removed after');

    // a cluster that cannot be reached: the controller test says so and what to do
    const port = await freePort();
    const unreachable = join(work, 'unreachable.kubeconfig');
    writeFileSync(unreachable, readFileSync(cluster.kubeconfig, 'utf8').replace(cluster.url, `https://127.0.0.1:${port}`));
    const failed = await run('npm', ['test'], { cwd: project, env: { ...env, KUBECONFIG: unreachable }, timeoutMs: 400_000 });
    assert.notEqual(failed.code, 0);
    assert.match(failed.stdout, new RegExp(`USE_EXISTING_CLUSTER=true: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} \\(kubeconfig ${unreachable.replace(/[.]/g, '\\.')}\\)`));
  } finally {
    admin.close();
    await cluster.stop();
  }
});

test('the built manager serves its webhooks and conversion to the authority (installWebhooks), and its /metrics counts every path', { timeout: 300_000 }, async () => {
  assert.ok(existsSync(join(project, 'dist/main.js')), 'the previous test built the project');
  const procs = new ProcessGroup();
  const authority = await startAuthority({ apply: [join(project, 'config/crd/bases')] });
  const webhooks = await installWebhooks(authority, { manifests: [join(project, 'config/webhook')], conversions: ['ships.crew.example.org'] });
  const client = new KubeClient(authority.restConfig);
  try {
    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    const manager = procs.start('manager', process.execPath, [
      join(project, 'dist/main.js'),
      '--kubeconfig', authority.kubeconfig,
      '--metrics-secure=false', `--metrics-bind-address=127.0.0.1:${metricsPort}`, `--health-probe-bind-address=127.0.0.1:${healthPort}`,
      `--webhook-cert-path=${webhooks.certDir}`, `--webhook-port=${webhooks.port}`,
    ], { cwd: project });
    await manager.waitForOutput(/Serving webhook server/, 60_000);
    const captains = '/apis/crew.example.org/v1/namespaces/default/captains';
    const stored = await client.create<{ spec: { foo?: string } }>(captains, { apiVersion: 'crew.example.org/v1', kind: 'Captain', metadata: { name: 'defaulted' }, spec: {} });
    assert.equal(stored.spec.foo, 'default', 'the defaulting webhook ran');
    await assert.rejects(client.create(captains, { apiVersion: 'crew.example.org/v1', kind: 'Captain', metadata: { name: 'refused' }, spec: { foo: 'x'.repeat(64) } }), (err: Error) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.status, 422);
      assert.match(err.message, /^admission webhook "vcaptain-v1\.kb\.io" denied the request: Captain\.crew\.example\.org "refused" is invalid: spec\.foo: /);
      return true;
    });
    await client.create('/apis/crew.example.org/v1alpha1/ships', { apiVersion: 'crew.example.org/v1alpha1', kind: 'Ship', metadata: { name: 'converted' }, spec: { foo: 'bar' } });
    const hub = await client.get<{ apiVersion: string; spec: object }>('/apis/crew.example.org/v1/ships/converted');
    assert.deepEqual([hub.apiVersion, hub.spec], ['crew.example.org/v1', { foo: 'bar' }], 'converted by the manager');
    const metrics = await new Promise<string>((resolve, reject) => {
      get(`http://127.0.0.1:${metricsPort}/metrics`, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    for (const path of ['/mutate-crew-example-org-v1-captain', '/validate-crew-example-org-v1-captain', '/convert']) {
      assert.match(metrics, new RegExp(`^controller_runtime_webhook_requests_total\\{code="200",webhook="${path}"\\} [1-9]\\d*$`, 'm'), path);
    }
  } finally {
    await procs.stopAll();
    client.close();
    await webhooks.uninstall();
    await authority.stop();
  }
});

test('ctrlmetrics dev: the webhooks answer kubectl from this machine, src/ changes restart the manager, Ctrl-C puts the cluster back', { timeout: 400_000 }, async () => {
  assert.ok(existsSync(join(project, 'node_modules')), 'the first test installed the project');
  // the cluster: an authority of its own, reached through its kubeconfig only
  const cluster = await startAuthority({});
  const admin = new KubeClient(cluster.restConfig);
  const procs = new ProcessGroup();
  const webhookConfigs = async () => {
    const out: string[] = [];
    for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
      for (const o of (await admin.get<{ items: Array<{ metadata: { name: string } }> }>(`/apis/admissionregistration.k8s.io/v1/${kind}`)).items) out.push(`${kind}/${o.metadata.name}`);
    }
    return out.sort();
  };
  const kubectl = (args: string[], input?: string) => run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000, input });
  const env = { ...userEnv, KUBECONFIG: cluster.kubeconfig };
  const ports = async () => ({ webhook: await freePort(), metrics: await freePort(), health: await freePort() });
  const devArgs = (p: { webhook: number; metrics: number; health: number }) => [
    join(ROOT, 'dist/cli.js'), 'dev', `--webhook-port=${p.webhook}`, `--metrics-bind-address=127.0.0.1:${p.metrics}`, `--health-probe-bind-address=127.0.0.1:${p.health}`,
  ];
  try {
    // an API server that cannot reach the webhook host (an unroutable address): refused, nothing left behind
    const unreachable = procs.start('dev-unreachable', process.execPath, [...devArgs(await ports()), '--webhook-host=192.0.2.1'], { cwd: project, env });
    assert.equal(await unreachable.exited, 1, unreachable.stderr().slice(-3000));
    assert.match(unreachable.stderr(), /^error: the cluster's API server \(https:\/\/127\.0\.0\.1:\d+\) cannot reach the webhook server at https:\/\/192\.0\.2\.1:\d+: .*failed calling webhook.*--webhook-host/m);
    assert.deepEqual(await webhookConfigs(), [], 'the probe configuration is gone');

    const p = await ports();
    const dev = procs.start('dev', process.execPath, [...devArgs(p), '--watch'], { cwd: project, env });
    const first = await dev.waitForOutput(/^dev: manager running \(pid (\d+)\)/m, 180_000);
    assert.match(dev.stderr(), new RegExp(`webhooks served at https://127\\.0\\.0\\.1:${p.webhook}`));
    // make install's part: the CRDs and the metrics reader role, so grant finds it
    await admin.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/captains.crew.example.org');
    await admin.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/crew-op-metrics-reader');
    await admin.create('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'scraper' } });
    const granted = await must('ctrlmetrics grant', run(process.execPath, [join(ROOT, 'dist/cli.js'), 'grant', '--serviceaccount', 'default:scraper'], { env, timeoutMs: 60_000 }));
    assert.match(granted.stdout, /clusterrolebinding.* created/);
    assert.deepEqual(await webhookConfigs(), ['mutatingwebhookconfigurations/crew-op-mutating-webhook-configuration', 'validatingwebhookconfigurations/crew-op-validating-webhook-configuration']);

    // through kubectl: a defaulted object, and a denied one in the webhook's words
    const captain = (name: string, spec: string) => `apiVersion: crew.example.org/v1\nkind: Captain\nmetadata: {name: ${name}, namespace: default}\nspec: ${spec}\n`;
    await eventually(async () => (await kubectl(['create', '-f', '-'], captain('defaulted', '{}'))).code === 0, 'the defaulted Captain', 30_000);
    assert.equal((await kubectl(['get', 'captain', 'defaulted', '-o', 'jsonpath={.spec.foo}'])).stdout, 'default');
    const denied = await kubectl(['create', '-f', '-'], captain('denied', `{foo: ${'x'.repeat(64)}}`));
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /admission webhook "vcaptain-v1\.kb\.io" denied the request|The Captain "denied" is invalid: spec\.foo/);
    // the conversion goes to the local server too
    assert.match((await kubectl(['create', '-f', '-'], 'apiVersion: crew.example.org/v1alpha1\nkind: Ship\nmetadata: {name: converted}\nspec: {foo: bar}\n')).stdout, /created/);
    assert.equal((await kubectl(['get', 'ships.v1.crew.example.org', 'converted', '-o', 'jsonpath={.apiVersion}'])).stdout, 'crew.example.org/v1');

    // a change in src/: rebuilt, and a new manager
    const controller = join(project, 'src', 'controllers', 'captain-controller.ts');
    writeFileSync(controller, `${readFileSync(controller, 'utf8')}\n// touched by the dev test\n`);
    await eventually(() => {
      const pids = [...dev.stderr().matchAll(/^dev: manager running \(pid (\d+)\)/gm)].map((m) => m[1]);
      return pids.length >= 2 && pids.at(-1) !== first[1];
    }, 'a restarted manager', 180_000, 250);
    assert.match(dev.stderr(), /^dev: src\/ changed: rebuilding$/m);
    assert.doesNotMatch(dev.stderr(), /the manager exited/, 'a restart is not the manager ending on its own');

    // Ctrl-C: the manager stops, the webhook configurations go, the CRD's conversion is as before
    dev.child.kill('SIGINT');
    assert.equal(await dev.exited, 0, dev.stderr().slice(-3000));
    assert.deepEqual(await webhookConfigs(), [], 'no webhook configuration left behind to fail writes');
    const ships = await admin.get<{ spec: { conversion?: { webhook?: { clientConfig?: { url?: string } } } } }>('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ships.crew.example.org');
    assert.equal(ships.spec.conversion?.webhook?.clientConfig?.url, undefined, 'the conversion no longer names the local server');
    assert.match(dev.stderr(), /^dev: mutatingwebhookconfiguration crew-op-mutating-webhook-configuration deleted$/m);
  } finally {
    await procs.stopAll();
    admin.close();
    await cluster.stop();
  }
});
