// A typical operator's CRD (controller-gen's shape: validation markers, defaults, int-or-string, a keyed list,
// metav1.Condition in a status subresource) through the real kubectl 1.32 against the authority: what a
// cluster refuses is refused, unknown fields are refused under kubectl's strict default and pruned without it,
// defaults are filled, and server-side apply owns keyed list elements. Expected texts are kube-apiserver 1.32's
// (../shared/reference/kube-apiserver-rules.md §1-2).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { run } from '../helpers/process.js';
import type { Obj } from './https.js';

const CRD = join(import.meta.dirname, 'fixtures', 'memcached-crd.yaml');

describe('kubectl with a kubebuilder-style CRD on the authority', () => {
  let a: Authority;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', a.kubeconfig, ...args], { env, timeoutMs: 30_000 });
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const manifest = (name: string, spec: string) => {
    const p = join(dir, `${name}.yaml`);
    writeFileSync(
      p,
      `apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: ${name}\n  namespace: cache\nspec:\n${spec}`,
    );
    return p;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authority-kubectl-crd-'));
    env = { ...process.env, KUBECACHEDIR: join(dir, 'cache'), HOME: dir, KUBECONFIG: '' };
    a = await startAuthority({ listen: '127.0.0.1:0', kubeconfigOut: join(dir, 'kubeconfig') });
    await ok('create', 'namespace', 'cache');
    assert.match(
      await ok('apply', '-f', CRD),
      /customresourcedefinition.apiextensions.k8s.io\/memcacheds.cache.example.com created/,
    );
    await ok('wait', '--for=condition=established', '--timeout=10s', 'crd/memcacheds.cache.example.com');
  });
  after(async () => {
    await a?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a valid object is created with the schema's defaults filled in", async () => {
    assert.match(
      await ok('apply', '-f', manifest('m1', '  image: memcached:1.6\n  port: memcache\n')),
      /memcached.cache.example.com\/m1 created/,
    );
    const spec = JSON.parse(await ok('get', 'memcached', 'm1', '-n', 'cache', '-o', 'jsonpath={.spec}')) as Obj;
    assert.deepEqual(spec, { image: 'memcached:1.6', port: 'memcache', pullPolicy: 'IfNotPresent', size: 1 });
  });

  it('an invalid object is refused with every error, as a cluster refuses it', async () => {
    const r = await kubectl('apply', '-f', manifest('bad', '  size: 5\n  pullPolicy: Sometimes\n  port: 1.5\n'));
    assert.equal(r.code, 1);
    // kubectl lists the causes of a 422 one per line, as in the recorded K71
    assert.match(r.stderr, /^The Memcached "bad" is invalid: \n\* /);
    for (const e of [
      '* spec.size: Invalid value: 5: spec.size in body should be less than or equal to 3',
      '* spec.pullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
      '* spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
      '* spec.image: Required value\n',
    ]) {
      assert.ok(r.stderr.includes(e), `missing ${e} in ${r.stderr}`);
    }
    assert.match((await kubectl('get', 'memcached', 'bad', '-n', 'cache')).stderr, /NotFound/);
  });

  it("an unknown field: refused under kubectl's default strict validation, pruned with --validate=false", async () => {
    const p = manifest('typo', '  image: memcached:1.6\n  replicas: 2\n');
    const strict = await kubectl('apply', '-f', p);
    assert.equal(strict.code, 1);
    assert.match(
      strict.stderr,
      /Memcached in version "v1alpha1" cannot be handled as a Memcached: strict decoding error: unknown field "spec\.replicas"/,
    );
    await ok('apply', '--validate=false', '-f', p);
    const spec = JSON.parse(await ok('get', 'memcached', 'typo', '-n', 'cache', '-o', 'jsonpath={.spec}')) as Obj;
    assert.equal(spec.replicas, undefined);
    const warned = await kubectl(
      'apply',
      '--validate=warn',
      '-f',
      manifest('typo2', '  image: memcached:1.6\n  replicas: 2\n'),
    );
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: unknown field "spec\.replicas"/);
  });

  it('status conditions are validated through the status subresource', async () => {
    const cond = (status: string) =>
      JSON.stringify({
        status: {
          conditions: [
            {
              type: 'Available',
              status,
              reason: 'Reconciled',
              message: 'ok',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        },
      });
    const bad = await kubectl(
      'patch',
      'memcached',
      'm1',
      '-n',
      'cache',
      '--subresource=status',
      '--type=merge',
      '-p',
      cond('Maybe'),
    );
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /status\.conditions\[0\]\.status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"/,
    );
    await ok('patch', 'memcached', 'm1', '-n', 'cache', '--subresource=status', '--type=merge', '-p', cond('True'));
    assert.equal(
      await ok('get', 'memcached', 'm1', '-n', 'cache', '-o', 'jsonpath={.status.conditions[0].status}'),
      'True',
    );
  });

  it("kubectl scale goes through the CRD's scale subresource, and the schema still holds", async () => {
    assert.match(
      await ok('api-resources', '--api-group=cache.example.com', '-o', 'wide'),
      /^memcacheds\s+cache\.example\.com\/v1alpha1\s+true\s+Memcached\s+/m,
    );
    await ok(
      'patch',
      'memcached',
      'm1',
      '-n',
      'cache',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":1,"selector":"app=memcached"}}',
    );
    assert.match(
      await ok('scale', 'memcached', 'm1', '-n', 'cache', '--replicas=2'),
      /^memcached\.cache\.example\.com\/m1 scaled$/m,
    );
    assert.equal(await ok('get', 'memcached', 'm1', '-n', 'cache', '-o', 'jsonpath={.spec.size}'), '2');
    const scale = JSON.parse(
      await ok('get', '--raw', '/apis/cache.example.com/v1alpha1/namespaces/cache/memcacheds/m1/scale'),
    ) as Obj;
    assert.deepEqual(
      [scale.kind, scale.apiVersion, scale.spec, scale.status],
      ['Scale', 'autoscaling/v1', { replicas: 2 }, { replicas: 1, selector: 'app=memcached' }],
    );
    const tooMany = await kubectl('scale', 'memcached', 'm1', '-n', 'cache', '--replicas=5');
    assert.equal(tooMany.code, 1);
    assert.match(tooMany.stderr, /spec\.size: Invalid value: 5: spec\.size in body should be less than or equal to 3/);
  });

  it("server-side apply: two managers own their own elements of a keyed list; changing another's is a conflict", async () => {
    const p1 = manifest('shared', '  image: memcached:1.6\n  tolerations:\n  - {key: a, value: "1"}\n');
    await ok('apply', '--server-side', '--field-manager=team-a', '-f', p1);
    const p2 = manifest('shared', '  image: memcached:1.6\n  tolerations:\n  - {key: b, value: "2"}\n');
    await ok('apply', '--server-side', '--field-manager=team-b', '-f', p2);
    const tol = JSON.parse(
      await ok('get', 'memcached', 'shared', '-n', 'cache', '-o', 'jsonpath={.spec.tolerations}'),
    ) as Obj[];
    assert.deepEqual(tol, [
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
    ]);
    const clash = await kubectl(
      'apply',
      '--server-side',
      '--field-manager=team-b',
      '-f',
      manifest('shared', '  image: memcached:1.6\n  tolerations:\n  - {key: a, value: "9"}\n'),
    );
    assert.equal(clash.code, 1);
    assert.match(
      clash.stderr,
      /^error: Apply failed with 1 conflict: conflict with "team-a": \.spec\.tolerations\[key="a"\]\.value$/m,
    );
    await ok(
      'apply',
      '--server-side',
      '--field-manager=team-b',
      '--force-conflicts',
      '-f',
      manifest('shared', '  image: memcached:1.6\n  tolerations:\n  - {key: a, value: "9"}\n'),
    );
    const got = JSON.parse(
      await ok('get', 'memcached', 'shared', '-n', 'cache', '-o', 'json', '--show-managed-fields'),
    ) as Obj;
    // team-b no longer applies its element b: it goes; a is now team-b's value
    assert.deepEqual(got.spec.tolerations, [{ key: 'a', value: '9' }]);
    const teamA = (got.metadata.managedFields as Obj[]).find((e) => e.manager === 'team-a');
    assert.deepEqual(teamA?.fieldsV1?.['f:spec']?.['f:tolerations'], { 'k:{"key":"a"}': { '.': {}, 'f:key': {} } });
  });
});
