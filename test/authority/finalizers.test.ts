// Finalizers and deletion as kube-apiserver 1.32 runs them: a DELETE of an object with finalizers sets
// `deletionTimestamp` and `deletionGracePeriodSeconds: 0` (generation bumped once) and keeps the object; no new
// finalizer may be added while it is deleting; the write that empties the list deletes it. Messages are apimachinery's
// (ValidateNoNewFinalizers, ValidateFinalizerName = IsQualifiedName, ValidateDeleteOptions), written from the
// upstream rules, not taken from this code. Checked over raw HTTPS and with the real kubectl 1.32.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { eventually, run } from '../helpers/process.js';
import { call, watch, type CallOptions } from './https.js';

const CRD = join(import.meta.dirname, 'fixtures', 'memcached-crd.yaml');
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('finalizers and deletion on the authority', () => {
  let a: Authority;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let admin: (method: string, path: string, o?: CallOptions) => ReturnType<typeof call>;
  const cms = '/api/v1/namespaces/fin/configmaps';
  const mems = '/apis/cache.example.com/v1alpha1/namespaces/fin/memcacheds';
  const merge = (path: string, body: unknown) =>
    admin('PATCH', path, { body, contentType: 'application/merge-patch+json' });
  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', a.kubeconfig, ...args], { env, timeoutMs: 30_000 });
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authority-finalizers-'));
    env = { ...process.env, KUBECACHEDIR: join(dir, 'cache'), HOME: dir, KUBECONFIG: '' };
    // the namespace controller's pass every 100 ms instead of every second: the namespace case waits less
    a = await startAuthority({
      listen: '127.0.0.1:0',
      kubeconfigOut: join(dir, 'kubeconfig'),
      namespacePurgeDelayMs: 100,
    });
    admin = (method, path, o = {}) => call(a.url, a.caPem, method, path, { token: a.adminToken, ...o });
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'fin' } } })).status, 201);
    await ok('apply', '-f', CRD);
    await ok('wait', '--for=condition=established', '--timeout=10s', 'crd/memcacheds.cache.example.com');
  });
  after(async () => {
    await a?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a DELETE keeps an object with finalizers, marks it deleting and answers it; emptying the list deletes it', async () => {
    const created = await admin('POST', mems, {
      body: {
        apiVersion: 'cache.example.com/v1alpha1',
        kind: 'Memcached',
        metadata: { name: 'm1', finalizers: ['cache.example.com/cleanup'] },
        spec: { image: 'memcached:1.6' },
      },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.generation, 1);
    const w = await watch(
      a.url,
      a.caPem,
      `${mems}?watch=1&resourceVersion=${created.body.metadata.resourceVersion}`,
      a.adminToken,
    );
    try {
      const del = await admin('DELETE', `${mems}/m1`);
      assert.equal(del.status, 200);
      assert.equal(del.body.kind, 'Memcached', 'the answer is the object, not a Status');
      assert.match(del.body.metadata.deletionTimestamp, RFC3339);
      assert.equal(del.body.metadata.deletionGracePeriodSeconds, 0);
      assert.equal(del.body.metadata.generation, 2, 'marking an object deleting bumps its generation');
      assert.deepEqual(del.body.metadata.finalizers, ['cache.example.com/cleanup']);

      // still there, and a second DELETE changes nothing
      const got = await admin('GET', `${mems}/m1`);
      assert.equal(got.status, 200);
      assert.equal(got.body.metadata.deletionTimestamp, del.body.metadata.deletionTimestamp);
      const again = await admin('DELETE', `${mems}/m1`);
      assert.equal(again.status, 200);
      assert.equal(again.body.metadata.resourceVersion, got.body.metadata.resourceVersion);
      assert.equal(again.body.metadata.generation, 2);

      // an update cannot clear or move the deletion, nor add a finalizer
      const cleared = await admin('PUT', `${mems}/m1`, {
        body: {
          ...got.body,
          metadata: { ...got.body.metadata, deletionTimestamp: null, deletionGracePeriodSeconds: undefined },
        },
      });
      assert.equal(cleared.status, 200);
      assert.equal(cleared.body.metadata.deletionTimestamp, del.body.metadata.deletionTimestamp);
      assert.equal(cleared.body.metadata.deletionGracePeriodSeconds, 0);
      const added = await merge(`${mems}/m1`, {
        metadata: { finalizers: ['cache.example.com/cleanup', 'b.example.com/x', 'a.example.com/y'] },
      });
      assert.equal(added.status, 422);
      assert.equal(
        added.body.message,
        'Memcached.cache.example.com "m1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.example.com/y", "b.example.com/x"}',
      );
      assert.deepEqual(added.body.details.causes, [
        {
          reason: 'FieldValueForbidden',
          message: added.body.message.slice(added.body.message.indexOf('Forbidden')),
          field: 'metadata.finalizers',
        },
      ]);

      // removing the last finalizer deletes it; the write answers the object
      const removed = await merge(`${mems}/m1`, { metadata: { finalizers: null } });
      assert.equal(removed.status, 200);
      assert.equal(removed.body.metadata.name, 'm1');
      assert.equal(removed.body.metadata.finalizers, undefined);
      assert.equal((await admin('GET', `${mems}/m1`)).status, 404);

      // a watcher sees the deletion mark as MODIFIED, then DELETED (the refused and no-op writes are not events)
      const events = await w.waitFor(2);
      assert.deepEqual(
        events.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
      );
      assert.equal(events[0].object.metadata.deletionTimestamp, del.body.metadata.deletionTimestamp);
    } finally {
      w.close();
    }
  });

  it('an object without finalizers is deleted at once, answered with a Success Status', async () => {
    assert.equal((await admin('POST', cms, { body: { metadata: { name: 'plain' } } })).status, 201);
    const del = await admin('DELETE', `${cms}/plain`);
    assert.equal(del.status, 200);
    assert.equal(del.body.kind, 'Status');
    assert.equal(del.body.status, 'Success');
    assert.equal((await admin('GET', `${cms}/plain`)).status, 404);
  });

  it('a dry-run DELETE answers the deleting object and stores nothing', async () => {
    assert.equal(
      (await admin('POST', cms, { body: { metadata: { name: 'dry', finalizers: ['example.com/f'] } } })).status,
      201,
    );
    const del = await admin('DELETE', `${cms}/dry?dryRun=All`);
    assert.equal(del.status, 200);
    assert.match(del.body.metadata.deletionTimestamp, RFC3339);
    const got = await admin('GET', `${cms}/dry`);
    assert.equal(got.body.metadata.deletionTimestamp, undefined);
    // an object that is not deleting may gain and lose finalizers freely
    assert.equal(
      (await merge(`${cms}/dry`, { metadata: { finalizers: ['example.com/f', 'example.com/g'] } })).status,
      200,
    );
    assert.equal((await merge(`${cms}/dry`, { metadata: { finalizers: null } })).status, 200);
    assert.equal(
      (await admin('GET', `${cms}/dry`)).status,
      200,
      'emptying the finalizers of an object not being deleted keeps it',
    );
  });

  it('finalizer names are qualified names, as kube validates them', async () => {
    const bad = await admin('POST', cms, {
      body: { metadata: { name: 'badfin', finalizers: ['example.com/ok', 'a/b/c', '-x'] } },
    });
    assert.equal(bad.status, 422);
    assert.equal(
      bad.body.message,
      "ConfigMap \"badfin\" is invalid: [metadata.finalizers: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName'), " +
        "metadata.finalizers: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]",
    );
    const both = await admin('POST', cms, {
      body: { metadata: { name: 'both', finalizers: ['orphan', 'foregroundDeletion'] } },
    });
    assert.equal(both.status, 422);
    assert.equal(
      both.body.message,
      'ConfigMap "both" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
    );
  });

  it("DeleteOptions: the three propagation policies are accepted, anything else is kube's 422", async () => {
    for (const policy of ['Background', 'Foreground', 'Orphan']) {
      assert.equal(
        (await admin('POST', cms, { body: { metadata: { name: `p-${policy.toLowerCase()}` } } })).status,
        201,
      );
      const del = await admin('DELETE', `${cms}/p-${policy.toLowerCase()}`, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: policy },
      });
      assert.equal(del.status, 200, `${policy}: ${del.text}`);
    }
    assert.equal((await admin('POST', cms, { body: { metadata: { name: 'p-bad' } } })).status, 201);
    const bad = await admin('DELETE', `${cms}/p-bad?propagationPolicy=Eventually`);
    assert.equal(bad.status, 422);
    assert.equal(
      bad.body.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Eventually": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    const both = await admin('DELETE', `${cms}/p-bad`, {
      body: { propagationPolicy: 'Orphan', orphanDependents: true },
    });
    assert.equal(both.status, 422);
    assert.equal(
      both.body.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    );
    assert.equal((await admin('GET', `${cms}/p-bad`)).status, 200, 'a refused DELETE deletes nothing');
  });

  it('deleting a namespace marks its objects with finalizers deleting and waits for them, as the namespace controller', async () => {
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'fin-ns' } } })).status, 201);
    const nscms = '/api/v1/namespaces/fin-ns/configmaps';
    assert.equal(
      (await admin('POST', nscms, { body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } })).status,
      201,
    );
    assert.equal((await admin('POST', nscms, { body: { metadata: { name: 'free' } } })).status, 201);
    assert.equal((await admin('DELETE', '/api/v1/namespaces/fin-ns')).status, 200);
    await eventually(
      async () => (await admin('GET', `${nscms}/free`)).status === 404,
      'the object without finalizers to go',
      10_000,
      100,
    );
    const held = await eventually(
      async () => {
        const r = await admin('GET', `${nscms}/held`);
        return r.body.metadata?.deletionTimestamp ? r.body : undefined;
      },
      'the held object to be marked deleting',
      10_000,
      100,
    );
    assert.deepEqual(held.metadata.finalizers, ['example.com/hold']);
    const ns = await admin('GET', '/api/v1/namespaces/fin-ns');
    assert.equal(ns.status, 200, 'the namespace waits for the object');
    assert.equal(ns.body.status.phase, 'Terminating');
    assert.equal((await merge(`${nscms}/held`, { metadata: { finalizers: [] } })).status, 200);
    assert.equal((await admin('GET', `${nscms}/held`)).status, 404);
    await eventually(
      async () => (await admin('GET', '/api/v1/namespaces/fin-ns')).status === 404,
      'the namespace to go',
      10_000,
      100,
    );
  });

  it('with kubectl: delete leaves a Memcached deleting until its finalizer is patched away', async () => {
    const manifest =
      'apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: k1\n  namespace: fin\n  finalizers: [cache.example.com/cleanup]\nspec:\n  image: memcached:1.6\n';
    assert.match(
      (await run('kubectl', ['--kubeconfig', a.kubeconfig, 'apply', '-f', '-'], { env, input: manifest })).stdout,
      /memcached.cache.example.com\/k1 created/,
    );
    // kubectl's own wait would block on the finalizer, exactly as on a cluster: here it times out and says so
    const waited = await kubectl('delete', 'memcached', 'k1', '-n', 'fin', '--timeout=1s');
    assert.equal(waited.code, 1);
    assert.match(waited.stdout, /memcached.cache.example.com "k1" deleted/);
    assert.match(waited.stderr, /timed out waiting for the condition on memcacheds\/k1/);
    const ts = await ok('get', 'memcached', 'k1', '-n', 'fin', '-o', 'jsonpath={.metadata.deletionTimestamp}');
    assert.match(ts, RFC3339);
    const refused = await kubectl(
      'patch',
      'memcached',
      'k1',
      '-n',
      'fin',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/late"}]',
    );
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers \[\]string\{"example.com\/late"\}/,
    );
    assert.match(
      await ok('patch', 'memcached', 'k1', '-n', 'fin', '--type=merge', '-p', '{"metadata":{"finalizers":null}}'),
      /memcached.cache.example.com\/k1 patched/,
    );
    const gone = await kubectl('get', 'memcached', 'k1', '-n', 'fin');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /Error from server \(NotFound\): memcacheds.cache.example.com "k1" not found/);
  });
});
