// @kubernetes/client-node against the authority, configured only by the kubeconfig the authority writes:
// typed API calls, an informer (list + watch) seeing add/update/delete, and a watch resumed from a resourceVersion.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';

function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const tick = () => {
      const v = check();
      if (v !== undefined) return resolve(v);
      if (Date.now() > deadline) return reject(new Error(`${what}: not seen within ${timeoutMs} ms`));
      setTimeout(tick, 25);
    };
    tick();
  });
}

describe('@kubernetes/client-node against the authority', () => {
  let a: Authority;
  let dir: string;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authority-client-node-'));
    a = await startAuthority({ listen: '127.0.0.1:0', kubeconfigOut: join(dir, 'kubeconfig') });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(a.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });
  after(async () => {
    await a?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('typed calls work with the kubeconfig as written (CA, token)', async () => {
    const created = await core.createNamespace({ body: { metadata: { name: 'typed' } } });
    assert.equal(created.metadata?.name, 'typed');
    const list = await core.listNamespace();
    assert.ok(list.items.some((n) => n.metadata?.name === 'typed'));
    await assert.rejects(
      () => core.readNamespacedConfigMap({ name: 'missing', namespace: 'typed' }),
      (err: unknown) => (err as { code?: number }).code === 404,
    );
    const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSelfSubjectAccessReview({
      body: { spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } } },
    });
    assert.equal(review.status?.allowed, true, 'admin is in system:masters');
  });

  it('an informer sees add, update and delete events', async () => {
    await core.createNamespace({ body: { metadata: { name: 'inf' } } });
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/inf/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'inf' }),
    );
    const seen: string[] = [];
    informer.on('add', (o: k8s.V1ConfigMap) => seen.push(`add ${o.metadata?.name} ${o.data?.v ?? ''}`));
    informer.on('update', (o: k8s.V1ConfigMap) => seen.push(`update ${o.metadata?.name} ${o.data?.v ?? ''}`));
    informer.on('delete', (o: k8s.V1ConfigMap) => seen.push(`delete ${o.metadata?.name}`));
    const errors: unknown[] = [];
    informer.on('error', (e: unknown) => errors.push(e));
    await core.createNamespacedConfigMap({
      namespace: 'inf',
      body: { metadata: { name: 'before' }, data: { v: '0' } },
    });
    await informer.start();
    try {
      await waitFor('initial add', () => (seen.includes('add before 0') ? true : undefined));
      await core.createNamespacedConfigMap({ namespace: 'inf', body: { metadata: { name: 'c1' }, data: { v: '1' } } });
      await waitFor('add c1', () => (seen.includes('add c1 1') ? true : undefined));
      await core.patchNamespacedConfigMap(
        { name: 'c1', namespace: 'inf', body: { data: { v: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await waitFor('update c1', () => (seen.includes('update c1 2') ? true : undefined));
      await core.deleteNamespacedConfigMap({ name: 'c1', namespace: 'inf' });
      await waitFor('delete c1', () => (seen.includes('delete c1') ? true : undefined));
      assert.deepEqual(
        seen.filter((s) => s.includes('c1')),
        ['add c1 1', 'update c1 2', 'delete c1'],
      );
      // every namespace also holds kube-root-ca.crt, as in a real cluster
      assert.deepEqual(
        informer
          .list('inf')
          .map((o) => o.metadata?.name)
          .sort(),
        ['before', 'kube-root-ca.crt'],
      );
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });

  it('Watch resumes from a list resourceVersion and reports only later changes', async () => {
    await core.createNamespace({ body: { metadata: { name: 'wr' } } });
    await core.createNamespacedSecret({ namespace: 'wr', body: { metadata: { name: 'old' } } });
    const list = await core.listNamespacedSecret({ namespace: 'wr' });
    const events: string[] = [];
    let ended: unknown = 'open';
    const req = await new k8s.Watch(kc).watch(
      '/api/v1/namespaces/wr/secrets',
      { resourceVersion: list.metadata?.resourceVersion },
      (type: string, o: k8s.V1Secret) => events.push(`${type} ${o.metadata?.name}`),
      (err: unknown) => (ended = err ?? null),
    );
    try {
      await core.createNamespacedSecret({ namespace: 'wr', body: { metadata: { name: 'new' } } });
      await waitFor('ADDED new', () => (events.includes('ADDED new') ? true : undefined));
      assert.deepEqual(events, ['ADDED new']);
      assert.equal(ended, 'open');
    } finally {
      req.abort();
    }
  });
});
