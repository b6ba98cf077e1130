/**
 * `ctrlmetrics edit --enable sharding` on a generated project, checked with real kubectl: config/default renders the
 * manager as a ring of shards (replicas, POD_NAME from the downward API, --sharding-ring with the ring's final name,
 * leader election off) and the sharder (the manager's image, its Service, certificate and RBAC, the ControllerRing
 * CRD), without a placeholder left; the render applies to the authority in one `kubectl apply`; a project whose
 * patches target every Deployment gets them narrowed to the manager's; off again, the sharding parts go.
 * The project's own test of two shards and the sharder runs in test/e2e/create-api-project.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { editProject, readOptionState } from '../../packages/cli/src/scaffold/edit.js';
import { setImage } from '../../packages/cli/src/scaffold/set-image.js';
import { ScaffoldError } from '../../packages/cli/src/scaffold/errors.js';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { run } from '../helpers/process.js';

type Obj = Record<string, any>;

let work: string;
let authority: Authority;
before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-sharding-scaffold-'));
  authority = await startAuthority({ crds: ['cert-manager'] });
});
after(async () => {
  await authority?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function project(name: string): Promise<string> {
  const dir = join(work, name);
  await initProject({ projectName: name, dir, ctrlmetricsVersion: '^0.1.0' });
  return dir;
}

async function render(dir: string): Promise<{ text: string; objects: Obj[] }> {
  const r = await run('kubectl', ['kustomize', join(dir, 'config/default')], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  const objects = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o);
  return { text: r.stdout, objects };
}

const find = (objects: Obj[], kind: string, name: string): Obj => {
  const o = objects.find((x) => x.kind === kind && x.metadata?.name === name);
  assert.ok(o, `${kind} ${name} rendered: ${objects.map((x) => `${x.kind}/${x.metadata?.name}`).join(', ')}`);
  return o;
};
const container = (deployment: Obj): Obj => deployment.spec.template.spec.containers[0];
const env = (c: Obj): Record<string, unknown> =>
  Object.fromEntries((c.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));

test('edit --enable sharding: cert-manager along; config/default renders the shards and the sharder with their final names', async () => {
  const dir = await project('ring-op');
  const result = await editProject(dir, { enable: ['sharding'] });
  assert.deepEqual(result.messages, [
    "enabled certmanager too (the sharder's serving certificate comes from cert-manager)",
    'enabled sharding',
  ]);
  setImage(join(dir, 'config/manager'), 'controller', 'registry.example.com/ring-op:v1');
  const { text, objects } = await render(dir);
  assert.doesNotMatch(text, /\bSERVICE_NAME\b|SERVICE_NAMESPACE|\bRING_NAME\b/, 'no placeholder reaches the build');

  const manager = find(objects, 'Deployment', 'ring-op-controller-manager');
  assert.equal(manager.spec.replicas, 3);
  const m = container(manager);
  // the last --leader-elect wins (Go's flags): a shard's Lease replaces leader election
  assert.deepEqual(m.args.slice(-2), ['--leader-elect=false', '--sharding-ring=$(SHARDING_RING)']);
  assert.deepEqual(env(m).POD_NAME, { fieldRef: { fieldPath: 'metadata.name' } });
  assert.equal(env(m).SHARDING_RING, 'ring-op-controller-manager', "the ring is named after the manager's Deployment");

  const sharder = find(objects, 'Deployment', 'ring-op-sharder');
  const s = container(sharder);
  assert.equal(s.image, 'registry.example.com/ring-op:v1', "the manager's image, as set-image set it");
  assert.equal(m.image, 'registry.example.com/ring-op:v1');
  assert.deepEqual(s.command, ['/nodejs/bin/node', '/app/dist/sharder.js']);
  assert.ok(s.args.includes('--ring=$(SHARDING_RING)'));
  assert.ok(s.args.includes('--webhook-service=$(POD_NAMESPACE)/$(WEBHOOK_SERVICE_NAME)'));
  assert.equal(s.args[0], '--leader-elect', "the manager's patches leave the sharder alone");
  assert.equal(env(s).SHARDING_RING, 'ring-op-controller-manager');
  assert.equal(env(s).WEBHOOK_SERVICE_NAME, 'ring-op-sharder-webhook-service');
  assert.deepEqual(env(s).POD_NAMESPACE, { fieldRef: { fieldPath: 'metadata.namespace' } });
  assert.equal(sharder.spec.template.spec.serviceAccountName, 'ring-op-sharder');
  assert.equal(sharder.spec.template.spec.volumes[0].secret.secretName, 'sharder-webhook-server-cert');
  assert.equal(
    sharder.spec.template.metadata.labels['control-plane'],
    'sharder',
    'not selected by the metrics Service',
  );

  const service = find(objects, 'Service', 'ring-op-sharder-webhook-service');
  assert.deepEqual(service.spec.selector, { 'control-plane': 'sharder', 'app.kubernetes.io/name': 'ring-op' });
  const certificate = find(objects, 'Certificate', 'ring-op-sharder-serving-cert');
  assert.deepEqual(certificate.spec.dnsNames, [
    'ring-op-sharder-webhook-service.ring-op-system.svc',
    'ring-op-sharder-webhook-service.ring-op-system.svc.cluster.local',
  ]);
  assert.equal(certificate.spec.issuerRef.name, 'ring-op-selfsigned-issuer');
  assert.equal(certificate.spec.secretName, 'sharder-webhook-server-cert');
  find(objects, 'CustomResourceDefinition', 'controllerrings.sharding.timebertt.dev');
  for (const [binding, account] of [
    ['ring-op-sharder-rolebinding', 'ring-op-sharder'],
    ['ring-op-shard-rolebinding', 'ring-op-controller-manager'],
  ]) {
    assert.deepEqual(find(objects, 'ClusterRoleBinding', binding).subjects, [
      { kind: 'ServiceAccount', name: account, namespace: 'ring-op-system' },
    ]);
  }
  assert.equal(
    objects.some((o) => o.kind === 'ControllerRing'),
    false,
    "the ring is the sharder's to create: kubectl cannot apply it with its CRD in one go",
  );

  // the whole render applies in one go, as `npm run deploy` applies it
  const applied = await run(
    'kubectl',
    ['--kubeconfig', authority.kubeconfig, 'apply', '-k', join(dir, 'config/default')],
    { timeoutMs: 60_000 },
  );
  assert.equal(applied.code, 0, applied.stderr);
  for (const line of [
    'customresourcedefinition.apiextensions.k8s.io/controllerrings.sharding.timebertt.dev created',
    'deployment.apps/ring-op-sharder created',
    'service/ring-op-sharder-webhook-service created',
    'certificate.cert-manager.io/ring-op-sharder-serving-cert created',
  ]) {
    assert.ok(applied.stdout.includes(line), `kubectl apply output has "${line}":\n${applied.stdout}`);
  }
});

test('a project whose patches target every Deployment gets them named for the manager; off again, the sharding parts go', async () => {
  const dir = await project('old-op');
  const kustomization = join(dir, 'config/default/kustomization.yaml');
  // as projects made before sharding existed (and kubebuilder's) write the targets
  const unnamed = readFileSync(kustomization, 'utf8').replace(
    /^(#?)( *)kind: Deployment\n#? *name: controller-manager\n/gm,
    '$1$2kind: Deployment\n',
  );
  assert.doesNotMatch(unnamed, /kind: Deployment\n#? *name: controller-manager\n/);
  writeFileSync(kustomization, unnamed);
  const on = await editProject(dir, { enable: ['metrics-tls', 'sharding'] });
  assert.ok(
    on.messages.includes("named the manager's Deployment in the patches' targets (the sharder is a Deployment too)"),
    on.messages.join('\n'),
  );
  const { objects } = await render(dir);
  const sharder = container(find(objects, 'Deployment', 'old-op-sharder'));
  assert.equal(sharder.args[0], '--leader-elect', 'no --metrics-bind-address patched in');
  assert.equal(sharder.volumeMounts.length, 1, 'no metrics certificate mounted');
  assert.ok(
    container(find(objects, 'Deployment', 'old-op-controller-manager')).args.includes(
      '--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs',
    ),
  );

  await editProject(dir, { disable: ['sharding'] });
  assert.equal(readOptionState(dir).sharding, false);
  assert.equal(readOptionState(dir).certmanager, true, 'cert-manager stays: metrics-tls uses it');
  const off = await render(dir);
  assert.equal(
    off.objects.some((o) => o.metadata?.name === 'old-op-sharder'),
    false,
  );
  assert.equal(find(off.objects, 'Deployment', 'old-op-controller-manager').spec.replicas, 1);
  assert.doesNotMatch(off.text, /sharding-ring|SHARDING_RING/);
});

test('a project without src/sharder.ts is refused, saying what is missing, and nothing is written', async () => {
  const dir = await project('bare-op');
  rmSync(join(dir, 'src/sharder.ts'));
  const before = readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8');
  await assert.rejects(
    editProject(dir, { enable: ['sharding'] }),
    (e: unknown) =>
      e instanceof ScaffoldError && /src\/sharder\.ts not found \(the sharder's Deployment runs it\)/.test(e.message),
  );
  assert.equal(readFileSync(join(dir, 'config/default/kustomization.yaml'), 'utf8'), before);
});
