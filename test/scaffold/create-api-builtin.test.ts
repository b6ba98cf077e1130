/**
 * `ctrlmetrics create api --resource=false` for Kubernetes' own kinds: a controller for Deployments (apps), for
 * Ingresses (networking, domain k8s.io) and for Pods (core) in a project that also has an API of its own group;
 * the files, the RBAC markers with the real group and resource, the PROJECT entries as kubebuilder writes core
 * types, the kubernetes-types dependency; refusals that list what exists; the project type-checks; and every
 * built-in kind a controller can watch has a sample the authority accepts (the scaffolded test creates it).
 * Expected plurals and scopes are written from Kubernetes' API, not read from the scaffolder's table.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { CRD_SETS } from '../../packages/envtest/src/crds.js';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { createApi } from '../../packages/cli/src/scaffold/create-api.js';
import { createWebhook } from '../../packages/cli/src/scaffold/create-webhook.js';
import { builtinSample } from '../../packages/cli/src/scaffold/builtin-samples.js';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { BUILTIN_TYPES } from '../../packages/envtest/src/resources.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { typeErrorsOfProject } from '../helpers/project-typecheck.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

let work: string;
let app: string;
const read = (p: string) => readFileSync(join(app, p), 'utf8');
const refusal = async (opts: Parameters<typeof createApi>[0]) => {
  const err = await createApi({ dir: app, ...opts }).then(
    () => assert.fail('create api succeeded'),
    (e: unknown) => e as Error,
  );
  return err.message;
};

before(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'ctrlmetrics-create-api-builtin-')));
  app = join(work, 'fleet-op');
  await initProject({ projectName: 'fleet-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
  // an API of the project's own group first: built-in kinds are other groups, which a single-group project allows
  await createApi({ dir: app, group: 'fleet', version: 'v1', kind: 'Harbor' });
});
after(() => rmSync(work, { recursive: true, force: true }));

describe('create api --resource=false for built-in kinds', () => {
  test("a Deployment controller: typed by kubernetes-types, RBAC on apps/deployments, a PROJECT entry as kubebuilder's", async () => {
    const r = await createApi({ dir: app, group: 'apps', version: 'v1', kind: 'Deployment', resource: false });
    assert.deepEqual(r.written, [
      'PROJECT',
      'package.json',
      'src/controllers/deployment-controller.ts',
      'src/main.ts',
      'test/controllers/deployment-controller.test.ts',
    ]);
    assert.equal(r.apiCreated, false);
    const controller = read('src/controllers/deployment-controller.ts');
    assert.match(controller, /^import type \{ Deployment \} from 'kubernetes-types\/apps\/v1\.js';$/m);
    assert.match(controller, /^export const DEPLOYMENT = \{ apiVersion: 'apps\/v1', kind: 'Deployment' \} as const;$/m);
    assert.match(
      controller,
      /^\/\/ \+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete$/m,
    );
    assert.match(
      controller,
      /^\/\/ \+kubebuilder:rbac:groups=apps,resources=deployments\/status,verbs=get;update;patch$/m,
    );
    assert.ok(!existsSync(join(app, 'src/api/v1/deployment-types.ts')), 'no types of its own');
    assert.match(
      read('src/main.ts'),
      /^import \{ newDeploymentController \} from '\.\/controllers\/deployment-controller\.js';$/m,
    );
    assert.match(read('src/main.ts'), /^ {2}mgr\.add\(newDeploymentController\(\)\);$/m);
    assert.equal(JSON.parse(read('package.json')).dependencies['kubernetes-types'], '1.25.0');
    const test = read('test/controllers/deployment-controller.test.ts');
    assert.match(test, /await client\.create\('\/apis\/apps\/v1\/namespaces\/default\/deployments', SAMPLE\);/);
    const entries = (parseYaml(read('PROJECT')) as { resources: Array<Record<string, unknown>> }).resources;
    assert.deepEqual(entries.at(-1), {
      controller: true,
      group: 'apps',
      kind: 'Deployment',
      path: 'kubernetes-types/apps/v1',
      version: 'v1',
    });
  });

  test('an Ingress (networking, domain k8s.io) and a Pod (the core group, written core in markers and PROJECT)', async () => {
    await createApi({ dir: app, group: 'networking', version: 'v1', kind: 'Ingress', resource: false });
    await createApi({ dir: app, group: 'core', version: 'v1', kind: 'Pod', resource: false });
    assert.match(
      read('src/controllers/ingress-controller.ts'),
      /^\/\/ \+kubebuilder:rbac:groups=networking\.k8s\.io,resources=ingresses,verbs=/m,
    );
    assert.match(
      read('src/controllers/pod-controller.ts'),
      /^\/\/ \+kubebuilder:rbac:groups=core,resources=pods,verbs=/m,
    );
    assert.match(
      read('src/controllers/pod-controller.ts'),
      /^import type \{ Pod \} from 'kubernetes-types\/core\/v1\.js';$/m,
    );
    assert.match(
      read('test/controllers/pod-controller.test.ts'),
      /await client\.create\('\/api\/v1\/namespaces\/default\/pods', SAMPLE\);/,
    );
    const entries = (parseYaml(read('PROJECT')) as { resources: Array<Record<string, unknown>> }).resources;
    assert.deepEqual(entries.slice(-2), [
      {
        controller: true,
        domain: 'k8s.io',
        group: 'networking',
        kind: 'Ingress',
        path: 'kubernetes-types/networking/v1',
        version: 'v1',
      },
      { controller: true, group: 'core', kind: 'Pod', path: 'kubernetes-types/core/v1', version: 'v1' },
    ]);
    // a cluster-scoped kind's test creates it without a namespace
    await createApi({ dir: app, group: 'rbac.authorization', version: 'v1', kind: 'ClusterRole', resource: false });
    assert.match(
      read('test/controllers/clusterrole-controller.test.ts'),
      /await client\.create\('\/apis\/rbac\.authorization\.k8s\.io\/v1\/clusterroles', SAMPLE\);/,
    );
  });

  test('unknown versions and kinds are refused with what exists; so are kinds no controller can watch, and types-less kinds of other groups', async () => {
    assert.equal(
      await refusal({ group: 'apps', version: 'v1beta1', kind: 'Deployment', resource: false }),
      'the built-in API group apps has no version v1beta1 in Kubernetes v1.25.9; its versions: v1',
    );
    assert.equal(
      await refusal({ group: 'batch', version: 'v1', kind: 'Cronjob', resource: false }),
      'batch/v1 has no kind Cronjob in Kubernetes v1.25.9; its kinds: CronJob, Job',
    );
    assert.equal(
      await refusal({ group: 'authorization', version: 'v1', kind: 'SubjectAccessReview', resource: false }),
      'SubjectAccessReview (authorization.k8s.io/v1) answers only create: a controller needs to list and watch the kind it reconciles',
    );
    assert.match(
      await refusal({ group: 'cache', version: 'v1', kind: 'Memcached', resource: false }),
      /^cache\.example\.com\/v1 Memcached has no types in this project: drop --resource=false/,
    );
    // a second group of the project's own is still refused, as kubebuilder refuses it without multigroup
    assert.match(
      await refusal({ group: 'cache', version: 'v1', kind: 'Memcached' }),
      /^multiple groups are not allowed by default/,
    );
  });

  test("create webhook for a built-in kind: controller-runtime's paths (/mutate--v1-pod), markers with the real group and resource", async () => {
    const r = await createWebhook({
      dir: app,
      group: 'core',
      version: 'v1',
      kind: 'Pod',
      defaulting: true,
      programmaticValidation: true,
    });
    assert.ok(
      r.written.includes('src/webhooks/v1/pod-webhook.ts') &&
        r.written.includes('test/webhooks/pod-webhook.test.ts') &&
        r.written.includes('src/main.ts'),
      r.written.join(' '),
    );
    const hook = read('src/webhooks/v1/pod-webhook.ts');
    assert.match(hook, /^import type \{ Pod \} from 'kubernetes-types\/core\/v1\.js';$/m);
    assert.match(
      hook,
      /^\/\/ \+kubebuilder:webhook:path=\/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups=core,resources=pods,verbs=create;update,versions=v1,name=mpod-v1\.kb\.io,admissionReviewVersions=v1$/m,
    );
    assert.match(
      hook,
      /^\/\/ \+kubebuilder:webhook:path=\/validate--v1-pod,mutating=false,.*,groups=core,resources=pods,.*name=vpod-v1\.kb\.io,/m,
    );
    assert.match(
      read('src/main.ts'),
      /^ {2}if \(process\.env\.ENABLE_WEBHOOKS !== 'false'\) mgr\.add\(newPodWebhook\(\)\);$/m,
    );
    // the Pod's entry (from create api) gains its webhooks
    const entries = (parseYaml(read('PROJECT')) as { resources: Array<Record<string, unknown>> }).resources;
    assert.deepEqual(
      entries.filter((e) => e.kind === 'Pod'),
      [
        {
          controller: true,
          group: 'core',
          kind: 'Pod',
          path: 'kubernetes-types/core/v1',
          version: 'v1',
          webhooks: { defaulting: true, validation: true, webhookVersion: 'v1' },
        },
      ],
    );
    // a kind without a controller gets an entry of its own; apps' path has no empty group
    await createWebhook({ dir: app, group: 'apps', version: 'v1', kind: 'StatefulSet', defaulting: true });
    assert.match(
      read('src/webhooks/v1/statefulset-webhook.ts'),
      /path=\/mutate-apps-v1-statefulset,.*groups=apps,resources=statefulsets,/,
    );
    const after = (parseYaml(read('PROJECT')) as { resources: Array<Record<string, unknown>> }).resources;
    assert.deepEqual(after.at(-1), {
      group: 'apps',
      kind: 'StatefulSet',
      path: 'kubernetes-types/apps/v1',
      version: 'v1',
      webhooks: { defaulting: true, webhookVersion: 'v1' },
    });
    // Kubernetes converts its own kinds; an unknown group still needs an API
    await assert.rejects(
      createWebhook({ dir: app, group: 'apps', version: 'v1', kind: 'Deployment', conversion: true }),
      /Deployment is a built-in kind of Kubernetes, which the API server converts itself/,
    );
    await assert.rejects(
      createWebhook({ dir: app, group: 'cache', version: 'v1', kind: 'Memcached', defaulting: true }),
      /^ScaffoldError: create webhook requires a previously created API$/,
    );
  });

  test("--external-api-path: a controller for another project's kind, its types generated from the CRD", async () => {
    const crds = join(work, 'cert-manager.crds.yaml');
    writeFileSync(crds, CRD_SETS['cert-manager'].crds.map((c) => stringify(c)).join('---\n'));
    const r = await createApi({
      dir: app,
      group: 'cert-manager',
      version: 'v1',
      kind: 'Certificate',
      resource: false,
      externalApiDomain: 'io',
      externalApiPath: crds,
    });
    assert.deepEqual(r.written.sort(), [
      'PROJECT',
      'config/crd/external/cert-manager.io_certificates.yaml',
      'src/api/external/cert-manager.io/v1/certificate-types.ts',
      'src/controllers/certificate-controller.ts',
      'src/main.ts',
      'test/controllers/certificate-controller.test.ts',
    ]);
    const controller = read('src/controllers/certificate-controller.ts');
    assert.match(
      controller,
      /^import type \{ Certificate \} from '\.\.\/api\/external\/cert-manager\.io\/v1\/certificate-types\.js';$/m,
    );
    assert.match(
      controller,
      /^\/\/ \+kubebuilder:rbac:groups=cert-manager\.io,resources=certificates,verbs=get;list;watch;create;update;patch;delete$/m,
    );
    assert.match(read('src/api/external/cert-manager.io/v1/certificate-types.ts'), /^\/\/ \+kubebuilder:skip$/m);
    // the test installs the CRD kept in the project and creates a Certificate with the fields its schema requires
    const test = read('test/controllers/certificate-controller.test.ts');
    assert.match(
      test,
      // (as Prettier formats it: the project's .prettierrc.json)
      /startTestEnvironment\(\{\s*crdDirectoryPaths: \[join\(ROOT, 'config\/crd\/external\/cert-manager\.io_certificates\.yaml'\)\],?\s*\}\)/,
    );
    assert.match(test, /secretName: 'sample'/);
    const entries = (parseYaml(read('PROJECT')) as { resources: Array<Record<string, unknown>> }).resources;
    assert.deepEqual(entries.at(-1), {
      controller: true,
      domain: 'io',
      external: true,
      group: 'cert-manager',
      kind: 'Certificate',
      path: 'src/api/external/cert-manager.io/v1',
      version: 'v1',
    });
    // a kind the CRDs do not define, and the flags without --resource=false
    assert.equal(
      await refusal({
        group: 'cert-manager',
        version: 'v1',
        kind: 'Order',
        resource: false,
        externalApiDomain: 'io',
        externalApiPath: crds,
      }),
      `${crds} defines no cert-manager.io/v1 Order; it defines cert-manager.io/v1 Issuer, cert-manager.io/v1 ClusterIssuer, cert-manager.io/v1 Certificate (the group is --group and --external-api-domain)`,
    );
    assert.match(
      await refusal({
        group: 'cert-manager',
        version: 'v1',
        kind: 'Certificate',
        externalApiDomain: 'io',
        externalApiPath: crds,
      }),
      /go with --resource=false$/,
    );
  });

  test(
    'the project type-checks with its built-in controllers and webhooks (strict, no unused names)',
    { skip: SECOND_NODE_SKIP_COMPILER },
    async () => {
      assert.deepEqual(await typeErrorsOfProject(app), []);
    },
  );
});

describe('the samples of the scaffolded tests', () => {
  let authority: Authority;
  let admin: KubeClient;
  before(async () => {
    authority = await startAuthority({ listen: '127.0.0.1:0' });
    admin = new KubeClient({ ...authority.restConfig, qps: 1000, burst: 1000 });
  });
  after(async () => {
    admin?.close();
    await authority?.stop();
  });

  test('every built-in kind a controller can list and watch has one, and the authority accepts each', async () => {
    const watchable = BUILTIN_TYPES.filter((t) => t.verbs.includes('list') && t.verbs.includes('watch'));
    assert.ok(watchable.length >= 50, `${watchable.length} kinds`);
    for (const t of watchable) {
      const apiVersion = t.group ? `${t.group}/${t.version}` : t.version;
      const sample = builtinSample(
        apiVersion,
        t.kind,
        `${t.kind.toLowerCase()}-sample`,
        t.namespaced ? 'default' : undefined,
      );
      assert.ok(sample, `a sample of ${apiVersion} ${t.kind}`);
      const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
      const collection = `${base}${t.namespaced ? '/namespaces/default' : ''}/${t.resource}`;
      const created = await admin.create<{ metadata: { name: string } }>(collection, sample);
      // the next version of the same resource reads the same object: remove it so that its sample can be created
      await admin.delete(`${collection}/${created.metadata.name}`);
    }
  });
});
