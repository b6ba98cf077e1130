/**
 * The manager's cache transforms (controller-runtime's `DefaultTransform` and `ByObject[].Transform`), on the
 * authority: `cache.defaultTransform` changes every kind's cached objects, a kind's own `byObject` transform
 * replaces it for that kind, reconciles and `ctx.cache` see the transformed objects (listed and watched), and
 * setting the default twice (`cache.defaultTransform` and `informers.transform`) is refused at start.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { transforms } from '../../packages/ctrlmetrics/src/exports/cache.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from '../helpers/process.js';

let cluster: TestCluster;
const NS = 'transformed';

before(async () => {
  cluster = await startTestCluster();
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});
after(() => cluster?.stop());

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };

/** Server-side apply, so the API server fills managedFields. */
const apply = (plural: string, kind: string, name: string, extra: Record<string, unknown>) =>
  cluster.admin.request<KubeObject>('PATCH', `/api/v1/namespaces/${NS}/${plural}/${name}`, {
    query: { fieldManager: 'tester' },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind, metadata: { name }, ...extra },
  });

/** A Secret's transform of its own: keep the names of its keys, drop the values (and leave managedFields). */
function secretKeysOnly(obj: KubeObject): KubeObject {
  const secret = obj as KubeObject & { data?: Record<string, string> };
  const keys = Object.keys(secret.data ?? {})
    .sort()
    .join(',');
  delete secret.data;
  secret.metadata = { ...secret.metadata, annotations: { ...secret.metadata?.annotations, 'example.com/keys': keys } };
  return secret;
}

const managerOptions = { handleSignals: false, metrics: { bindAddress: '0' }, healthProbeBindAddress: '0' } as const;

test('cache.defaultTransform applies to every kind, a byObject transform replaces it for its kind', async () => {
  await apply('configmaps', 'ConfigMap', 'listed', { data: { a: '1' } });
  await apply('secrets', 'Secret', 'listed', { stringData: { password: 'p', user: 'u' } });
  const seen: Array<{ kind: string; name: string; managedFields: boolean; data: boolean; keys?: string }> = [];
  const mgr = new Manager({
    ...managerOptions,
    restConfig: cluster.authority.restConfig,
    cache: {
      defaultNamespaces: [NS],
      defaultTransform: transforms.stripManagedFields,
      byObject: [{ ...SECRET, transform: secretKeysOnly }],
    },
  });
  const record = (o: KubeObject & { data?: unknown }) =>
    seen.push({
      kind: String(o.kind),
      name: String(o.metadata?.name),
      managedFields: o.metadata?.managedFields !== undefined,
      data: o.data !== undefined,
      ...(o.metadata?.annotations?.['example.com/keys'] !== undefined
        ? { keys: o.metadata.annotations['example.com/keys'] }
        : {}),
    });
  mgr.add(
    new Controller({
      name: 'transformed',
      watches: [CM, { ...SECRET, enqueue: (o) => [{ namespace: NS, name: `secret-${String(o.metadata?.name)}` }] }],
      reconciler: async (req, ctx) => {
        const cm = ctx.cache.get<KubeObject>('ConfigMap', req.namespace, req.name);
        if (cm) record(cm);
        const secret = ctx.cache.get<KubeObject>('Secret', req.namespace, req.name.replace(/^secret-/, ''));
        if (secret && req.name.startsWith('secret-')) record(secret);
      },
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    await apply('configmaps', 'ConfigMap', 'watched', { data: { b: '2' } });
    await apply('secrets', 'Secret', 'watched', { stringData: { token: 't' } });
    const names = () => new Set(seen.map((s) => `${s.kind}/${s.name}`));
    await eventually(
      () => ['ConfigMap/listed', 'ConfigMap/watched', 'Secret/listed', 'Secret/watched'].every((k) => names().has(k)),
      'every object reconciled',
      10_000,
      20,
    );
    const last = (kind: string, name: string) => seen.filter((s) => s.kind === kind && s.name === name).at(-1);
    // ConfigMaps: the default transform (no managedFields, data kept)
    assert.deepEqual(last('ConfigMap', 'listed'), {
      kind: 'ConfigMap',
      name: 'listed',
      managedFields: false,
      data: true,
    });
    assert.deepEqual(last('ConfigMap', 'watched'), {
      kind: 'ConfigMap',
      name: 'watched',
      managedFields: false,
      data: true,
    });
    // Secrets: their own transform instead (managedFields stay, values gone, key names kept)
    assert.deepEqual(last('Secret', 'listed'), {
      kind: 'Secret',
      name: 'listed',
      managedFields: true,
      data: false,
      keys: 'password,user',
    });
    assert.deepEqual(last('Secret', 'watched'), {
      kind: 'Secret',
      name: 'watched',
      managedFields: true,
      data: false,
      keys: 'token',
    });
  } finally {
    stop.abort();
    await running;
  }
});

test('cache.defaultTransform and informers.transform together are refused at start, naming both', async () => {
  const mgr = new Manager({
    ...managerOptions,
    restConfig: cluster.authority.restConfig,
    informers: { transform: transforms.stripManagedFields },
    cache: { defaultTransform: transforms.stripManagedFields },
  });
  mgr.add(new Controller({ name: 'twice', watches: [CM], reconciler: async () => undefined }));
  await assert.rejects(
    mgr.start(new AbortController().signal),
    /cache\.defaultTransform and informers\.transform both set/,
  );
});

test('a byObject transform that is no function is refused at start', async () => {
  const mgr = new Manager({
    ...managerOptions,
    restConfig: cluster.authority.restConfig,
    cache: { byObject: [{ ...SECRET, transform: 'strip' as unknown as (o: KubeObject) => KubeObject }] },
  });
  mgr.add(new Controller({ name: 'notfn', watches: [CM], reconciler: async () => undefined }));
  await assert.rejects(mgr.start(new AbortController().signal), /cache\.byObject Secret: transform must be a function/);
});
