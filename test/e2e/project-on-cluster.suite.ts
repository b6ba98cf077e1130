/**
 * A scaffolded project on a cluster it is given through KUBECONFIG, as its user runs it: `USE_EXISTING_CLUSTER=true
 * npm test` (the controller and webhook tests there, the cluster left as it was) and `ctrlmetrics dev` (the webhooks
 * served from this machine answering kubectl, a `src/` change restarting the manager, Ctrl-C putting the cluster
 * back). Registered by test/e2e/create-api-project.test.ts (an authority of its own stands in for the cluster) and
 * test/real-api/scaffolded-project-live.test.ts (a real cluster).
 *
 * The project is the one both files scaffold ({@link scaffoldCrewProject}): kinds Captain (namespaced, a controller,
 * defaulting and validating webhooks) and Ship (cluster-scoped, v1alpha1 converted to the v1 hub by webhook).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { Informer } from '../../packages/ctrlmetrics/src/kube/informer.js';
import type { KubeObject } from '../../packages/ctrlmetrics/src/controller/types.js';
import { ProcessGroup, ROOT, eventually, freePort, run } from '../helpers/process.js';
import { must, testSummary, userEnv } from '../helpers/project-run.js';

/** A cluster to run the project on. */
export interface ProjectCluster {
  url: string;
  kubeconfig: string;
  admin: KubeClient;
  stop(): Promise<void>;
}

/** The project: its directory, `--project-name` and `--domain`. */
export interface CrewProject {
  dir: string;
  name: string;
  domain: string;
}

const cliPath = () => join(ROOT, 'packages/cli/dist/cli.js');

/** `init`, the kinds and webhooks the suite expects, and `npm install`. */
export async function scaffoldCrewProject(p: CrewProject): Promise<void> {
  const cli = (args: string[]) => run(process.execPath, [cliPath(), ...args], { cwd: p.dir, timeoutMs: 180_000 });
  await must(
    'ctrlmetrics init',
    run(process.execPath, [cliPath(), 'init', '--project-name', p.name, '--domain', p.domain, '--dir', p.dir], {
      timeoutMs: 120_000,
    }),
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
  await must(
    'create api Deployment',
    cli(['create', 'api', '--group', 'apps', '--version', 'v1', '--kind', 'Deployment', '--resource=false']),
  );
  await must('npm install', run('npm', ['install', '--no-audit', '--no-fund'], { cwd: p.dir, timeoutMs: 300_000 }));
}

/**
 * Registers the two tests. `project()` is scaffolded and installed by then; `start()` gives the cluster (stopped
 * after each test); `owned` narrows the before/after comparison to the names this run makes, for a cluster others
 * use too (everything, on a cluster of the test's own).
 */
export function projectOnClusterTests(o: {
  project: () => CrewProject;
  /** How many tests the project's `npm test` has. */
  tests: number;
  start: () => Promise<ProjectCluster>;
  owned?: (name: string) => boolean;
}): void {
  const collections = [
    '/api/v1/namespaces',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  ];
  const inventory = async (admin: KubeClient, only: string[] = collections) => {
    const out: string[] = [];
    for (const c of only)
      for (const x of (await admin.get<{ items: Array<{ metadata: { name: string } }> }>(c)).items)
        out.push(`${c}/${x.metadata.name}`);
    return out.filter((n) => !o.owned || o.owned(n)).sort();
  };

  test(
    'USE_EXISTING_CLUSTER=true npm test: the controller and webhook tests on the cluster of KUBECONFIG, which is left as it was',
    { timeout: 600_000 },
    async () => {
      const p = o.project();
      assert.ok(existsSync(join(p.dir, 'node_modules')), 'the project is installed');
      const group = `crew.${p.domain}`;
      const cluster = await o.start();
      const admin = cluster.admin;
      try {
        const before = await inventory(admin);
        // what the cluster served while the tests ran (watched): the project's CRDs and its webhook configurations
        const seen = new Set<string>();
        const informers = collections.slice(1).map((path) => {
          const inf = new Informer<KubeObject>(admin, { path });
          inf.addHandler({
            onAdd: (x) =>
              seen.add(`${path}/${String(x.metadata?.name).replace(/^envtest-[0-9a-f]{6}-/, 'envtest-<id>-')}`),
          });
          inf.start();
          return inf;
        });
        for (const inf of informers) assert.equal(await inf.waitForSync(10_000), true);
        const env = { ...userEnv, USE_EXISTING_CLUSTER: 'true', KUBECONFIG: cluster.kubeconfig };
        const tested = await run('npm', ['test'], { cwd: p.dir, env, timeoutMs: 400_000 });
        await new Promise((r) => setTimeout(r, 200));
        await Promise.all(informers.map((inf) => inf.stop()));
        assert.equal(tested.code, 0, tested.stdout.slice(-3000) + tested.stderr.slice(-2000));
        assert.deepEqual(
          testSummary(tested.stdout),
          { tests: o.tests, pass: o.tests, fail: 0, cancelled: 0, skipped: 0, todo: 0 },
          tested.stdout.slice(-3000),
        );
        for (const name of [
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/captains.${group}`,
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ships.${group}`,
          '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/envtest-<id>-mutating-webhook-configuration',
          '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/envtest-<id>-validating-webhook-configuration',
        ]) {
          assert.ok(seen.has(name), `the cluster held ${name} during the tests`);
        }
        assert.deepEqual(
          await inventory(admin),
          before,
          'the CRDs (with their objects) and the webhook configurations removed after',
        );

        // a cluster that cannot be reached: the controller test says so and what to do
        const port = await freePort();
        const unreachable = join(p.dir, '..', `unreachable-${port}.kubeconfig`);
        writeFileSync(
          unreachable,
          readFileSync(cluster.kubeconfig, 'utf8').replace(cluster.url, `https://127.0.0.1:${port}`),
        );
        // (the controller test, as npm test just compiled it)
        const failed = await run(
          process.execPath,
          ['--test', 'dist-test/test/controllers/captain-controller.test.js'],
          { cwd: p.dir, env: { ...env, KUBECONFIG: unreachable }, timeoutMs: 120_000 },
        );
        assert.notEqual(failed.code, 0);
        assert.match(
          failed.stdout,
          new RegExp(
            `USE_EXISTING_CLUSTER=true: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} \\(kubeconfig ${unreachable.replace(/[.]/g, '\\.')}\\)`,
          ),
        );
      } finally {
        await cluster.stop();
      }
    },
  );

  test(
    'ctrlmetrics dev: the webhooks answer kubectl from this machine, src/ changes restart the manager, Ctrl-C puts the cluster back',
    { timeout: 400_000 },
    async () => {
      const p = o.project();
      assert.ok(existsSync(join(p.dir, 'node_modules')), 'the project is installed');
      const group = `crew.${p.domain}`;
      const cluster = await o.start();
      const admin = cluster.admin;
      const procs = new ProcessGroup();
      const hooks = [
        '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
        '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      ];
      const webhookConfigs = () => inventory(admin, hooks);
      const kubectl = (args: string[], input?: string) =>
        run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000, input });
      const env = { ...userEnv, KUBECONFIG: cluster.kubeconfig };
      const ports = async () => ({ webhook: await freePort(), metrics: await freePort(), health: await freePort() });
      const devArgs = (x: { webhook: number; metrics: number; health: number }) => [
        cliPath(),
        'dev',
        `--webhook-port=${x.webhook}`,
        `--metrics-bind-address=127.0.0.1:${x.metrics}`,
        `--health-probe-bind-address=127.0.0.1:${x.health}`,
      ];
      const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      try {
        const before = await webhookConfigs();
        // kubebuilder's make install, as the project's npm script
        await must(
          'npm run install-crds',
          run('npm', ['run', 'install-crds'], { cwd: p.dir, env, timeoutMs: 120_000 }),
        );
        await admin.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ships.${group}`);
        // an API server that cannot reach the webhook host (an unroutable address): refused, nothing left behind
        const unreachable = procs.start(
          'dev-unreachable',
          process.execPath,
          [...devArgs(await ports()), '--webhook-host=192.0.2.1'],
          { cwd: p.dir, env },
        );
        assert.equal(await unreachable.exited, 1, unreachable.stderr().slice(-3000));
        assert.match(
          unreachable.stderr(),
          new RegExp(
            `^error: the cluster's API server \\(${escape(cluster.url)}\\) cannot reach the webhook server at https://192\\.0\\.2\\.1:\\d+: .*failed calling webhook.*--webhook-host`,
            'm',
          ),
        );
        assert.deepEqual(await webhookConfigs(), before, 'the probe configuration is gone');

        const x = await ports();
        const dev = procs.start('dev', process.execPath, [...devArgs(x), '--watch'], { cwd: p.dir, env });
        const first = await dev.waitForOutput(/^dev: manager running \(pid (\d+)\)/m, 180_000);
        assert.match(dev.stderr(), new RegExp(`webhooks served at https://127\\.0\\.0\\.1:${x.webhook}`));
        // make install's part: the CRDs (there already) and the metrics reader role, so grant finds it
        await admin.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/captains.${group}`);
        await admin.get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${p.name}-metrics-reader`);
        const scrapers = `${p.name}-scrapers`;
        await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: scrapers } });
        await admin.create(`/api/v1/namespaces/${scrapers}/serviceaccounts`, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'scraper' },
        });
        const granted = await must(
          'ctrlmetrics grant',
          run(
            process.execPath,
            [
              cliPath(),
              'grant',
              '--serviceaccount',
              `${scrapers}:scraper`,
              '--clusterrole',
              `${p.name}-metrics-reader`,
            ],
            { env, timeoutMs: 60_000 },
          ),
        );
        assert.match(granted.stdout, /clusterrolebinding.* created/);
        assert.deepEqual(
          (await webhookConfigs()).filter((n) => !before.includes(n)),
          [
            `${hooks[0]}/${p.name}-mutating-webhook-configuration`,
            `${hooks[1]}/${p.name}-validating-webhook-configuration`,
          ],
        );

        // through kubectl: a defaulted object, and a denied one in the webhook's words
        const captain = (name: string, spec: string) =>
          `apiVersion: ${group}/v1\nkind: Captain\nmetadata: {name: ${name}, namespace: default}\nspec: ${spec}\n`;
        await eventually(
          async () => (await kubectl(['create', '-f', '-'], captain('defaulted', '{}'))).code === 0,
          'the defaulted Captain',
          30_000,
        );
        assert.equal(
          (await kubectl(['get', `captains.${group}`, 'defaulted', '-o', 'jsonpath={.spec.foo}'])).stdout,
          'default',
        );
        const denied = await kubectl(['create', '-f', '-'], captain('denied', `{foo: ${'x'.repeat(64)}}`));
        assert.equal(denied.code, 1);
        assert.match(
          denied.stderr,
          /admission webhook "vcaptain-v1\.kb\.io" denied the request|The Captain "denied" is invalid: spec\.foo/,
        );
        // the conversion goes to the local server too
        assert.match(
          (
            await kubectl(
              ['create', '-f', '-'],
              `apiVersion: ${group}/v1alpha1\nkind: Ship\nmetadata: {name: converted}\nspec: {foo: bar}\n`,
            )
          ).stdout,
          /created/,
        );
        assert.equal(
          (await kubectl(['get', `ships.v1.${group}`, 'converted', '-o', 'jsonpath={.apiVersion}'])).stdout,
          `${group}/v1`,
        );

        // a change in src/: rebuilt, and a new manager
        const controller = join(p.dir, 'src', 'controllers', 'captain-controller.ts');
        writeFileSync(controller, `${readFileSync(controller, 'utf8')}\n// touched by the dev test\n`);
        await eventually(
          () => {
            const pids = [...dev.stderr().matchAll(/^dev: manager running \(pid (\d+)\)/gm)].map((m) => m[1]);
            return pids.length >= 2 && pids.at(-1) !== first[1];
          },
          'a restarted manager',
          180_000,
          250,
        );
        assert.match(dev.stderr(), /^dev: src\/ changed: rebuilding$/m);
        assert.doesNotMatch(dev.stderr(), /the manager exited/, 'a restart is not the manager ending on its own');

        // Ctrl-C: the manager stops, the webhook configurations go, the CRD's conversion is as before
        dev.child.kill('SIGINT');
        assert.equal(await dev.exited, 0, dev.stderr().slice(-3000));
        assert.deepEqual(await webhookConfigs(), before, 'no webhook configuration left behind to fail writes');
        const ships = await admin.get<{ spec: { conversion?: { webhook?: { clientConfig?: { url?: string } } } } }>(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ships.${group}`,
        );
        assert.equal(
          ships.spec.conversion?.webhook?.clientConfig?.url,
          undefined,
          'the conversion no longer names the local server',
        );
        assert.match(
          dev.stderr(),
          new RegExp(`^dev: mutatingwebhookconfiguration ${p.name}-mutating-webhook-configuration deleted$`, 'm'),
        );

        // and make uninstall: the CRDs go, with their objects
        await must(
          'npm run uninstall-crds',
          run('npm', ['run', 'uninstall-crds'], { cwd: p.dir, env, timeoutMs: 120_000 }),
        );
        await assert.rejects(
          admin.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/captains.${group}`),
          /not found/,
        );
      } finally {
        await procs.stopAll();
        await cluster.stop();
      }
    },
  );
}
