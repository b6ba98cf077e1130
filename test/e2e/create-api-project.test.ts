/**
 * kubebuilder's first steps with ctrlmetrics: `init`, `create api` (two kinds in one group; a second group is
 * refused, then made with `edit --multigroup`; a controller for Deployments, a built-in kind, webhooks for Pods, and a controller for cert-manager's
 * Certificates typed from its CRD), `create webhook --defaulting --programmatic-validation`, a second version of one kind with
 * `create webhook --conversion`, `npm install`, then the project's own `npm test` (the metrics e2e test, each
 * generated controller test, which creates its sample on the authority and sees it reconciled, the webhook test,
 * the authority calling the webhooks, and the conversion test, the authority converting through the manager),
 * `npm run build` under strict, `npm run manifests` leaving the generated files as they are, and
 * `kubectl kustomize config/default` with every `edit` option on and off; `USE_EXISTING_CLUSTER=true npm test` and
 * `ctrlmetrics dev` on another API server reached through KUBECONFIG (test/e2e/project-on-cluster.suite.ts); then
 * the built manager serving its
 * webhooks and conversion to the authority, counted on /metrics.
 *
 * Needs the npm registry (the project's dependencies other than ctrlmetrics) and `npm run build` done first.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { CRD_SETS } from '../../packages/envtest/src/crds.js';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeApiError, KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { installWebhooks, startAuthority } from '../../packages/envtest/src/index.js';
import { ProcessGroup, ROOT, freePort, run } from '../helpers/process.js';
import { must, testSummary, userEnv } from '../helpers/project-run.js';
import { projectOnClusterTests } from './project-on-cluster.suite.js';

const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-create-api-e2e-'));
after(() => rmSync(work, { recursive: true, force: true }));
const project = join(work, 'crew-op');
const cli = (args: string[]) =>
  run(process.execPath, [join(ROOT, 'packages/cli/dist/cli.js'), ...args], { cwd: project, timeoutMs: 180_000 });

test(
  'init → create api ×2 → npm install → npm test, build, manifests and kustomize all pass',
  { timeout: 900_000 },
  async () => {
    assert.ok(existsSync(join(ROOT, 'packages/cli/dist/cli.js')), 'run npm run build first (npm test does)');
    await must(
      'ctrlmetrics init',
      run(
        process.execPath,
        [
          join(ROOT, 'packages/cli/dist/cli.js'),
          'init',
          '--project-name',
          'crew-op',
          '--domain',
          'example.org',
          '--dir',
          project,
        ],
        { timeoutMs: 120_000 },
      ),
    );
    await must('create api Captain', cli(['create', 'api', '--group', 'crew', '--version', 'v1', '--kind', 'Captain']));
    await must(
      'create api Ship',
      cli(['create', 'api', '--group', 'crew', '--version', 'v1alpha1', '--kind', 'Ship', '--namespaced=false']),
    );
    await must(
      'create webhook Captain',
      cli([
        'create',
        'webhook',
        '--group',
        'crew',
        '--version',
        'v1',
        '--kind',
        'Captain',
        '--defaulting',
        '--programmatic-validation',
      ]),
    );
    // Ship grows a version: v1 is the hub its conversion webhook converts v1alpha1 to and from
    await must(
      'create api Ship v1',
      cli([
        'create',
        'api',
        '--group',
        'crew',
        '--version',
        'v1',
        '--kind',
        'Ship',
        '--namespaced=false',
        '--controller=false',
      ]),
    );
    await must(
      'create webhook Ship --conversion',
      cli(['create', 'webhook', '--group', 'crew', '--version', 'v1', '--kind', 'Ship', '--conversion']),
    );
    const other = await cli(['create', 'api', '--group', 'fleet', '--version', 'v1', '--kind', 'Port']);
    assert.equal(other.code, 1);
    assert.equal(
      other.stderr,
      'error: multiple groups are not allowed by default, to enable multi-group visit https://kubebuilder.io/migration/multi-group.html (ctrlmetrics edit --multigroup switches this project to the multi-group layout)\n',
    );
    // which edit --multigroup allows: the second group's kind in src/api/fleet/v1, its controller and test by group
    await must('edit --multigroup', cli(['edit', '--multigroup']));
    await must('create api Port', cli(['create', 'api', '--group', 'fleet', '--version', 'v1', '--kind', 'Port']));
    // a controller for one of Kubernetes' own kinds: another group, which needs no multigroup layout
    await must(
      'create api Deployment',
      cli(['create', 'api', '--group', 'apps', '--version', 'v1', '--kind', 'Deployment', '--resource=false']),
    );
    // and webhooks for another: the core group's Pods (/mutate--v1-pod)
    await must(
      'create webhook Pod',
      cli([
        'create',
        'webhook',
        '--group',
        'core',
        '--version',
        'v1',
        '--kind',
        'Pod',
        '--defaulting',
        '--programmatic-validation',
      ]),
    );
    // and a controller for another project's kind, typed from its CRD (cert-manager's Certificate, as the authority carries it)
    const certManagerCrds = join(work, 'cert-manager.crds.yaml');
    writeFileSync(certManagerCrds, CRD_SETS['cert-manager'].crds.map((c) => stringify(c)).join('---\n'));
    await must(
      'create api Certificate',
      cli([
        'create',
        'api',
        '--group',
        'cert-manager',
        '--version',
        'v1',
        '--kind',
        'Certificate',
        '--resource=false',
        '--external-api-domain',
        'io',
        '--external-api-path',
        certManagerCrds,
      ]),
    );

    // the manager as a ring of shards: the project's sharding test runs two shards and the sharder
    await must('edit --enable sharding', cli(['edit', '--enable', 'sharding']));

    await must('npm install', run('npm', ['install', '--no-audit', '--no-fund'], { cwd: project, timeoutMs: 300_000 }));
    const tested = await must('npm test', run('npm', ['test'], { cwd: project, env: userEnv, timeoutMs: 400_000 }));
    assert.deepEqual(
      testSummary(tested.stdout),
      { tests: 16, pass: 16, fail: 0, cancelled: 0, skipped: 0, todo: 0 },
      tested.stdout.slice(-3000),
    );
    for (const name of [
      'the sample Captain is reconciled',
      'a Deployment is reconciled',
      'a Certificate is reconciled',
      'the sample Port is reconciled',
      'the defaulter marks a new Pod with DEFAULTED_LABEL',
      'the validator refuses a Pod whose DEFAULTED_LABEL is not "true", with its message',
      'the sample Ship is reconciled',
      'the defaulter fills spec.foo when it is unset',
      'the validator refuses a spec.foo that is too long, with its message',
      'a Ship written in v1alpha1 is stored in v1 and reads back the same in v1alpha1',
      'every sample ConfigMap is assigned to one shard and reconciled there alone',
      'a shard stopped hands its objects to the other',
      'the sharder logged no error and RBAC refused no shard: config/ grants them what they do',
    ]) {
      assert.ok(
        tested.stdout.split('\n').some((l) => /^\s*ok \d+ - /.test(l) && l.endsWith(` - ${name}`)),
        `passed: ${name}`,
      );
    }

    // npm run manifests (kubebuilder's make manifests) with the installed ctrlmetrics: the files create api wrote stay
    const crdFile = join(project, 'config/crd/bases/crew.example.org_captains.yaml');
    const before = readFileSync(crdFile, 'utf8');
    const manifests = await must(
      'npm run manifests',
      run('npm', ['run', 'manifests'], { cwd: project, env: userEnv, timeoutMs: 120_000 }),
    );
    assert.match(manifests.stdout, /config\/crd\/bases\/crew\.example\.org_captains\.yaml unchanged/);
    assert.equal(readFileSync(crdFile, 'utf8'), before);

    // every optional part on, then off (but cert-manager, which the webhooks' certificate needs): config/default
    // (with the CRDs and the webhooks) still builds
    const options = ['prometheus', 'certmanager', 'metrics-tls', 'network-policy', 'grafana'];
    for (const step of [
      ['--enable', options.join(',')],
      ['--disable', options.filter((o) => o !== 'certmanager').join(',')],
    ]) {
      await must(`edit ${step.join(' ')}`, cli(['edit', ...step]));
      const built = await must(
        'kubectl kustomize config/default',
        run('kubectl', ['kustomize', join(project, 'config/default')], { timeoutMs: 60_000 }),
      );
      assert.match(built.stdout, /^ {2}name: captains\.crew\.example\.org$/m);
      assert.match(built.stdout, /^ {2}name: ships\.crew\.example\.org$/m);
      assert.equal(/kind: ServiceMonitor/.test(built.stdout), step[0] === '--enable', `ServiceMonitor ${step[0]}d`);
      assert.match(built.stdout, /cert-manager\.io\/inject-ca-from: crew-op-system\/crew-op-serving-cert/);
    }
  },
);

// USE_EXISTING_CLUSTER=true npm test and ctrlmetrics dev on a cluster reached through its kubeconfig only (an
// authority of its own stands in for one someone already has)
projectOnClusterTests({
  project: () => ({ dir: project, name: 'crew-op', domain: 'example.org' }),
  tests: 16,
  start: async () => {
    const authority = await startAuthority({});
    const admin = new KubeClient(authority.restConfig);
    return {
      url: authority.url,
      kubeconfig: authority.kubeconfig,
      admin,
      async stop() {
        admin.close();
        await authority.stop();
      },
    };
  },
});

test(
  'the built manager serves its webhooks and conversion to the authority (installWebhooks), and its /metrics counts every path',
  { timeout: 300_000 },
  async () => {
    assert.ok(existsSync(join(project, 'dist/main.js')), 'the previous test built the project');
    const procs = new ProcessGroup();
    const authority = await startAuthority({ apply: [join(project, 'config/crd/bases')] });
    const webhooks = await installWebhooks(authority, {
      manifests: [join(project, 'config/webhook')],
      conversions: ['ships.crew.example.org'],
    });
    const client = new KubeClient(authority.restConfig);
    try {
      const [metricsPort, healthPort] = [await freePort(), await freePort()];
      const manager = procs.start(
        'manager',
        process.execPath,
        [
          join(project, 'dist/main.js'),
          '--kubeconfig',
          authority.kubeconfig,
          '--metrics-secure=false',
          `--metrics-bind-address=127.0.0.1:${metricsPort}`,
          `--health-probe-bind-address=127.0.0.1:${healthPort}`,
          `--webhook-cert-path=${webhooks.certDir}`,
          `--webhook-port=${webhooks.port}`,
        ],
        { cwd: project },
      );
      await manager.waitForOutput(/Serving webhook server/, 60_000);
      const captains = '/apis/crew.example.org/v1/namespaces/default/captains';
      const stored = await client.create<{ spec: { foo?: string } }>(captains, {
        apiVersion: 'crew.example.org/v1',
        kind: 'Captain',
        metadata: { name: 'defaulted' },
        spec: {},
      });
      assert.equal(stored.spec.foo, 'default', 'the defaulting webhook ran');
      await assert.rejects(
        client.create(captains, {
          apiVersion: 'crew.example.org/v1',
          kind: 'Captain',
          metadata: { name: 'refused' },
          spec: { foo: 'x'.repeat(64) },
        }),
        (err: Error) => {
          assert.ok(err instanceof KubeApiError);
          assert.equal(err.status, 422);
          assert.match(
            err.message,
            /^admission webhook "vcaptain-v1\.kb\.io" denied the request: Captain\.crew\.example\.org "refused" is invalid: spec\.foo: /,
          );
          return true;
        },
      );
      await client.create('/apis/crew.example.org/v1alpha1/ships', {
        apiVersion: 'crew.example.org/v1alpha1',
        kind: 'Ship',
        metadata: { name: 'converted' },
        spec: { foo: 'bar' },
      });
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
        assert.match(
          metrics,
          new RegExp(`^controller_runtime_webhook_requests_total\\{code="200",webhook="${path}"\\} [1-9]\\d*$`, 'm'),
          path,
        );
      }
    } finally {
      await procs.stopAll();
      client.close();
      await webhooks.uninstall();
      await authority.stop();
    }
  },
);
