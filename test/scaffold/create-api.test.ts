/**
 * `ctrlmetrics create api` in a project made by `init` (no npm install needed): the files kubebuilder's command
 * writes, the project file, the registration in src/main.ts, the manifests generated; the project type-checks
 * against this repository's src/index.ts; kubebuilder's checks in its order and words; existing files; a second
 * kind in the group and a second group; kustomize builds config/default and config/crd, and the CRD and the
 * sample apply on the authority.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { ROOT, run, runCli } from '../helpers/process.js';
import { typeErrorsOfProject } from '../helpers/project-typecheck.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

let work: string;
let app: string;
const create = (args: string[], dir = app) => runCli(['create', 'api', ...args, '--dir', dir], { timeoutMs: 120_000 });
const read = (p: string) => readFileSync(join(app, p), 'utf8');

before(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'ctrlmetrics-create-api-')));
  app = join(work, 'shop-op');
  await initProject({ projectName: 'shop-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
});
after(() => rmSync(work, { recursive: true, force: true }));

describe('create api', { skip: SECOND_NODE_SKIP_COMPILER }, () => {
  test('init records the project: PROJECT, and the scaffold markers', () => {
    const cli = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string };
    assert.deepEqual(parseYaml(read('PROJECT')), {
      // the templates' version, so a later release knows what it is looking at
      cliVersion: cli.version,
      domain: 'example.com',
      layout: ['ctrlmetrics.io/v1'],
      projectName: 'shop-op',
      version: '3',
    });
    assert.match(read('src/main.ts'), /^\/\/ \+ctrlmetrics:scaffold:imports$/m);
    assert.match(read('src/main.ts'), /^ {2}\/\/ \+ctrlmetrics:scaffold:controllers$/m);
    assert.match(read('config/default/kustomization.yaml'), /^#- \.\.\/crd$/m);
  });

  test("--version is the API version, not the CLI's", async () => {
    const r = await create(['--version', 'v1', '--kind', 'Bad_Kind', '--group', 'shop']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: error validating resource: invalid Kind: \[a DNS-1035 label must consist/);
  });

  test('a kind: the files kubebuilder writes, main.ts, the project file, and the manifests generated', async () => {
    const r = await create(['--group', 'shop', '--version', 'v1alpha1', '--kind', 'FirstMate']);
    assert.equal(r.code, 0, r.stderr);
    for (const f of [
      'src/api/v1alpha1/firstmate-types.ts',
      'src/controllers/firstmate-controller.ts',
      'test/controllers/firstmate-controller.test.ts',
      'config/samples/shop_v1alpha1_firstmate.yaml',
      'config/rbac/firstmate_admin_role.yaml',
      'config/rbac/firstmate_editor_role.yaml',
      'config/rbac/firstmate_viewer_role.yaml',
      'config/crd/bases/shop.example.com_firstmates.yaml',
    ]) {
      assert.ok(existsSync(join(app, f)), f);
    }
    assert.match(r.stdout, /^config\/crd\/bases\/shop\.example\.com_firstmates\.yaml written$/m);
    assert.match(
      r.stdout,
      /^Next: implement your new API in .* and generate the manifests \(CRDs, role\) with:\n\$ npm run manifests\n$/m,
    );
    assert.match(
      read('src/main.ts'),
      /^import \{ newFirstMateController \} from '\.\/controllers\/firstmate-controller\.js';\n\/\/ \+ctrlmetrics:scaffold:imports$/m,
    );
    assert.match(
      read('src/main.ts'),
      /^ {2}mgr\.add\(newFirstMateController\(\)\);\n {2}\/\/ \+ctrlmetrics:scaffold:controllers$/m,
    );
    assert.deepEqual((parseYaml(read('PROJECT')) as { resources: unknown[] }).resources, [
      {
        api: { crdVersion: 'v1', namespaced: true },
        controller: true,
        domain: 'example.com',
        group: 'shop',
        kind: 'FirstMate',
        path: 'src/api/v1alpha1',
        version: 'v1alpha1',
      },
    ]);
    assert.deepEqual(parseYaml(read('config/crd/kustomization.yaml')), {
      resources: ['bases/shop.example.com_firstmates.yaml'],
    });
    assert.deepEqual(parseYaml(read('config/samples/kustomization.yaml')), {
      resources: ['shop_v1alpha1_firstmate.yaml'],
    });
    assert.match(read('config/default/kustomization.yaml'), /^- \.\.\/crd$/m);
    assert.match(
      read('config/rbac/kustomization.yaml'),
      /^- firstmate_admin_role\.yaml\n- firstmate_editor_role\.yaml\n- firstmate_viewer_role\.yaml\n$/m,
    );
    const crd = parseYaml(read('config/crd/bases/shop.example.com_firstmates.yaml').replace(/^---\n/, '')) as Record<
      string,
      any
    >;
    assert.equal(crd.metadata.name, 'firstmates.shop.example.com');
    assert.deepEqual(crd.spec.versions[0].subresources, { status: {} });
    assert.deepEqual(crd.spec.versions[0].schema.openAPIV3Schema.required, ['spec']);
    assert.deepEqual(Object.keys(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties), ['foo']);
    // the manager role now comes from the markers: the sample ConfigMap controller's and the new kind's
    const role = parseYaml(read('config/rbac/role.yaml').replace(/^---\n/, '')) as {
      rules: Array<{ apiGroups: string[]; resources: string[] }>;
    };
    assert.deepEqual(
      role.rules.map((x) => `${x.apiGroups[0]}/${x.resources[0]}`),
      [
        '/configmaps',
        'shop.example.com/firstmates',
        'shop.example.com/firstmates/finalizers',
        'shop.example.com/firstmates/status',
      ],
    );
    const admin = parseYaml(read('config/rbac/firstmate_admin_role.yaml')) as {
      metadata: { name: string };
      rules: unknown[];
    };
    assert.equal(admin.metadata.name, 'firstmate-admin-role');
    assert.deepEqual(admin.rules, [
      { apiGroups: ['shop.example.com'], resources: ['firstmates'], verbs: ['*'] },
      { apiGroups: ['shop.example.com'], resources: ['firstmates/status'], verbs: ['get'] },
    ]);
  });

  test("kubebuilder's checks, in its order and words", async () => {
    const cases: Array<[string[], string]> = [
      [['--kind', 'X'], 'required flag(s) "version" not set'],
      [['--version', 'v1'], 'required flag(s) "kind" not set'],
      [['--group', '--version', 'v1', '--kind', 'X'], 'group flag present but empty'],
      [
        ['--group', 'Shop', '--version', 'v1', '--kind', 'X'],
        "error validating resource: either Group or Domain is invalid: [a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]",
      ],
      [
        ['--group', 'shop', '--version', 'V1', '--kind', 'X'],
        'error validating resource: version must respect DNS-1123 (was "V1")',
      ],
      [
        ['--group', 'shop', '--version', 'v1.2', '--kind', 'X'],
        'error validating resource: version "v1.2" must be a DNS-1035 label, as the API server requires of CRD versions (e.g. v1, v1alpha1)',
      ],
      [
        ['--group', 'shop', '--version', 'v1', '--kind', 'captain'],
        'error validating resource: invalid Kind: must start with an uppercase character',
      ],
      [
        ['--group', 'shop', '--version', 'v1', '--kind', 'Captain', '--plural', 'Captains'],
        "error validating resource: invalid Plural: [a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]",
      ],
      [['--group', 'shop', '--version', 'v1alpha1', '--kind', 'FirstMate'], 'API resource already exists'],
      [
        ['--group', 'crew', '--version', 'v1', '--kind', 'Captain'],
        'multiple groups are not allowed by default, to enable multi-group visit https://kubebuilder.io/migration/multi-group.html (ctrlmetrics edit --multigroup switches this project to the multi-group layout)',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await create(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      assert.equal(r.stderr.split('\n')[0], `error: ${message}`, args.join(' '));
    }
  });

  test('a second kind in the group, cluster-scoped with an irregular plural; files that exist', async () => {
    const r = await create([
      '--group',
      'shop',
      '--version',
      'v1',
      '--kind',
      'Fish',
      '--plural',
      'fish',
      '--namespaced=false',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(read('src/api/v1/fish-types.ts'), /^\/\/ \+kubebuilder:resource:path=fish,scope=Cluster$/m);
    const crd = parseYaml(read('config/crd/bases/shop.example.com_fish.yaml').replace(/^---\n/, '')) as {
      spec: { scope: string; names: { plural: string } };
    };
    assert.deepEqual([crd.spec.scope, crd.spec.names.plural], ['Cluster', 'fish']);
    const entry = (parseYaml(read('PROJECT')) as { resources: Array<Record<string, unknown>> }).resources[1];
    assert.deepEqual(entry, {
      api: { crdVersion: 'v1' },
      controller: true,
      domain: 'example.com',
      group: 'shop',
      kind: 'Fish',
      path: 'src/api/v1',
      plural: 'fish',
      version: 'v1',
    });
    assert.deepEqual(parseYaml(read('config/crd/kustomization.yaml')), {
      resources: ['bases/shop.example.com_firstmates.yaml', 'bases/shop.example.com_fish.yaml'],
    });
    // the controller alone again: its file exists
    const again = await create(['--group', 'shop', '--version', 'v1', '--kind', 'Fish', '--resource=false']);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, 'error: failed to create src/controllers/fish-controller.ts: file already exists\n');
    const forced = await create([
      '--group',
      'shop',
      '--version',
      'v1',
      '--kind',
      'Fish',
      '--plural',
      'fish',
      '--namespaced=false',
      '--force',
    ]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(read('src/main.ts').match(/mgr\.add\(newFishController\(\)\);/g)?.length, 1, 'registered once');
  });

  test("the project type-checks with its new kinds (strict, no unused names), against this repository's src/index.ts", async () => {
    assert.deepEqual(await typeErrorsOfProject(app), []);
  });

  test('a project made before the project file: the error says how to add it', async () => {
    const old = join(work, 'old-op');
    await initProject({ projectName: 'old-op', dir: old, ctrlmetricsVersion: '^0.1.0' });
    rmSync(join(old, 'PROJECT'));
    const r = await create(['--group', 'shop', '--version', 'v1', '--kind', 'Ship'], old);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error: .*PROJECT not found: this project was made by an earlier ctrlmetrics init\. Add it by running ctrlmetrics init --project-name <name> --domain <domain> --force/,
    );
  });
});

describe('the manifests of a created API', { skip: SECOND_NODE_SKIP_COMPILER }, () => {
  let cluster: TestCluster;
  before(async () => {
    cluster = await startTestCluster();
  });
  after(() => cluster?.stop());

  test('kustomize builds config/default (with the CRDs) and config/crd; the CRDs and the samples apply on the authority', async () => {
    const built = await run('kubectl', ['kustomize', join(app, 'config/default')], { timeoutMs: 60_000 });
    assert.equal(built.code, 0, built.stderr);
    const kinds = parseAllDocuments(built.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    assert.ok(
      kinds.some((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'firstmates.shop.example.com'),
    );
    assert.ok(kinds.some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'shop-op-firstmate-editor-role'));
    const kubectl = (args: string[]) =>
      run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 60_000 });
    const crds = await kubectl(['apply', '-k', join(app, 'config/crd')]);
    assert.equal(crds.code, 0, crds.stderr);
    assert.equal(
      crds.stdout,
      'customresourcedefinition.apiextensions.k8s.io/firstmates.shop.example.com created\ncustomresourcedefinition.apiextensions.k8s.io/fish.shop.example.com created\n',
    );
    let samples = { code: 1, stdout: '', stderr: '' } as Awaited<ReturnType<typeof kubectl>>;
    for (let i = 0; i < 50 && samples.code !== 0; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100)); // bounded: the CRDs become established
      samples = await kubectl(['apply', '-k', join(app, 'config/samples')]);
    }
    assert.equal(samples.code, 0, samples.stderr);
    assert.equal(
      samples.stdout,
      'fish.shop.example.com/fish-sample created\nfirstmate.shop.example.com/firstmate-sample created\n',
    );
  });
});
