/**
 * The reconcile context's client (cachedReadClient), as controller-runtime's delegating client: against the embedded
 * authority behind a counting proxy, reads of what a whole-collection informer caches make no API call and answer as
 * the API does (the object, a copy; a 404 with the API's words); queries, selector-filtered informers, other kinds
 * and writes go to the API. Given the REST mapper (as a manager's clients are), the first read of a kind that no
 * informer caches whole starts one, as controller-runtime's cache does, or — readerFailOnMissingInformer — throws.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError, KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { InformerSet } from '../../packages/ctrlmetrics/src/controller/informers.js';
import { cachedReadClient } from '../../packages/ctrlmetrics/src/controller/cached-client.js';
import { NotCachedError } from '../../packages/ctrlmetrics/src/controller/not-cached.js';
import { RESTMapper } from '../../packages/ctrlmetrics/src/kube/restmapper.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy } from '../helpers/fault-proxy.js';

const NS = 'cached-reads';
let cluster: TestCluster;
let proxy: FaultProxy;
let live: KubeClient;
let informers: InformerSet;
let cached: KubeClient;

type CM = {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
};

before(async () => {
  cluster = await startTestCluster();
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const name of ['cm-a', 'cm-b']) {
    await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: NS, labels: { app: 'x' } },
      data: { k: name },
    });
  }
  await cluster.admin.create(`/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: NS },
  });
  proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
  await proxy.start();
  live = new KubeClient({ ...cluster.authority.restConfig, server: proxy.url, ca: proxy.caPem });
  informers = new InformerSet(live);
  const whole = informers.informerFor({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS });
  // a selector-filtered informer of Secrets: its cache cannot say "not found"
  const filtered = informers.informerFor({ apiVersion: 'v1', kind: 'Secret', namespace: NS, labelSelector: 'app=x' });
  assert.ok(await whole.waitForSync(20_000));
  assert.ok(await filtered.waitForSync(20_000));
  cached = cachedReadClient(live, informers);
});

after(async () => {
  await informers?.stop();
  live?.close();
  await proxy?.stop();
  await cluster?.stop();
});

test('a get of a cached object makes no API call and returns a copy the reconciler may change', async () => {
  const before = proxy.count('/configmaps/cm-a');
  const a = await cached.get<CM>(`/api/v1/namespaces/${NS}/configmaps/cm-a`);
  assert.equal(a.data?.k, 'cm-a');
  a.data.k = 'changed by the reconciler';
  const again = await cached.get<CM>(`/api/v1/namespaces/${NS}/configmaps/cm-a`);
  assert.equal(again.data?.k, 'cm-a', 'the cache was not changed through the copy');
  assert.equal(proxy.count('/configmaps/cm-a'), before, 'no API call');
  assert.deepEqual(
    again,
    await live.get<CM>(`/api/v1/namespaces/${NS}/configmaps/cm-a`),
    'the same object as the API returns',
  );
});

test("a missing object is the API's 404, in its words, without an API call", async () => {
  const path = `/api/v1/namespaces/${NS}/configmaps/nope`;
  const fromCache = await cached.get(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.equal(proxy.count('/configmaps/nope'), 0);
  const fromApi = await live.get(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(fromCache instanceof KubeApiError && fromApi instanceof KubeApiError);
  assert.equal(fromCache.status, 404);
  assert.equal(fromCache.reason, fromApi.reason);
  assert.equal(fromCache.message, fromApi.message);
});

test('a list of the whole collection comes from the cache; a list with a query goes to the API', async () => {
  const lists = () => proxy.count(`/namespaces/${NS}/configmaps`) - proxy.count(`/namespaces/${NS}/configmaps/`);
  const before = lists();
  const list = await cached.get<{ items: CM[] }>(`/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(lists(), before, 'no API call');
  const fromApi = await live.get<{ items: CM[] }>(`/api/v1/namespaces/${NS}/configmaps`);
  const names = (l: { items: CM[] }) => l.items.map((i) => i.metadata.name).sort();
  assert.deepEqual(names(list), names(fromApi), 'the same objects as the API lists');
  assert.ok(names(list).includes('cm-a'));
  const before2 = lists();
  const selected = await cached.get<{ items: CM[] }>(`/api/v1/namespaces/${NS}/configmaps`, {
    query: { labelSelector: 'app=x' },
  });
  assert.equal(selected.items.length, 2);
  assert.equal(lists(), before2 + 1, 'a selector is asked of the API');
});

test('kinds cached only through a selector, or not at all, and subresources are read from the API; writes go to the API', async () => {
  const s = await cached.get<CM>(`/api/v1/namespaces/${NS}/secrets/s`);
  assert.equal(s.metadata.name, 's');
  assert.equal(proxy.count('/secrets/s'), 1, 'the filtered informer does not answer');
  await cached.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`).catch(() => undefined);
  assert.equal(proxy.count('/serviceaccounts/default'), 1, 'no informer: the API');
  await cached.mergePatch(`/api/v1/namespaces/${NS}/configmaps/cm-b`, { data: { k: 'patched' } });
  assert.equal(proxy.count('/configmaps/cm-b'), 1, 'the write went to the API');
});

test('unsafeDisableDeepCopy: the cached object itself, frozen — the same reference each time, no copy, and a write throws', async () => {
  const unsafe = cachedReadClient(live, informers, { unsafeDisableDeepCopy: true });
  const path = `/api/v1/namespaces/${NS}/configmaps/cm-b`;
  const a = await unsafe.get<CM>(path);
  const b = await unsafe.get<CM>(path);
  assert.equal(a, b, 'no copy: the same object');
  assert.ok(
    Object.isFrozen(a) && Object.isFrozen(a.data) && Object.isFrozen(a.metadata.labels),
    'frozen through and through',
  );
  assert.throws(() => {
    a.data!.k = 'changed by the reconciler';
  }, TypeError);
  const list = await unsafe.get<{ items: CM[] }>(`/api/v1/namespaces/${NS}/configmaps`);
  assert.ok(list.items.includes(a), 'the list hands out the same cached objects');
  // the default client still hands out copies the reconciler may change
  const copy = await cached.get<CM>(path);
  assert.notEqual(copy, a);
  copy.data!.k = 'fine';
  assert.equal((await unsafe.get<CM>(path)).data?.k, 'cm-b');
});

test('with a mapper, the first read of a kind no informer caches whole starts an informer for it; later reads make no API call', async () => {
  const set = new InformerSet(live);
  try {
    const starting = cachedReadClient(live, set, { mapper: new RESTMapper(live) });
    const path = `/api/v1/namespaces/${NS}/serviceaccounts/default`;
    const gets = proxy.count('/serviceaccounts/default');
    const sa = await starting.get<CM>(path);
    assert.equal(sa.metadata.name, 'default');
    assert.deepEqual(
      set.all().map((i) => i.path),
      ['/api/v1/serviceaccounts'],
      'one informer, for the kind (all namespaces: the cache has no scope)',
    );
    assert.ok(set.all()[0].synced);
    await starting.get<CM>(path);
    await assert.rejects(
      starting.get(`/api/v1/namespaces/${NS}/serviceaccounts/nope`),
      (e: unknown) => e instanceof KubeApiError && e.status === 404,
    );
    assert.equal(
      proxy.count('/serviceaccounts/default') + proxy.count('/serviceaccounts/nope'),
      gets,
      'answered by the new informer, not by GETs',
    );
    // a kind cached only through a selector gets a whole informer too, and a list is answered from it
    const list = await starting.get<{ items: CM[] }>(`/api/v1/namespaces/${NS}/secrets`);
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['s'],
    );
    assert.deepEqual(
      set
        .all()
        .map((i) => i.path)
        .sort(),
      ['/api/v1/secrets', '/api/v1/serviceaccounts'],
    );
  } finally {
    await set.stop();
  }
});

test('readerFailOnMissingInformer: such a read throws a NotCachedError, not a not-found, and starts nothing', async () => {
  const set = new InformerSet(live);
  try {
    const failing = cachedReadClient(live, set, { mapper: new RESTMapper(live), readerFailOnMissingInformer: true });
    const gets = proxy.count('/serviceaccounts/default');
    await assert.rejects(failing.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`), (e: unknown) => {
      assert.ok(e instanceof NotCachedError, String(e));
      assert.equal(
        (e as Error).message,
        "ServiceAccount (v1) is not cached: the manager's cache.readerFailOnMissingInformer is set and nothing watches it; watch it, or read it with apiReader",
      );
      return true;
    });
    assert.equal(set.all().length, 0);
    assert.equal(proxy.count('/serviceaccounts/default'), gets);
    // what an informer caches whole is still read from it
    set.informerFor({ apiVersion: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', namespace: NS });
    assert.equal((await failing.get<CM>(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).metadata.name, 'default');
    assert.equal(proxy.count('/serviceaccounts/default'), gets);
  } finally {
    await set.stop();
  }
});

test("a started informer that cannot list fails the read after the sync timeout, with the list's error", async () => {
  const set = new InformerSet(live, { backoffBaseMs: 20, backoffMaxMs: 50 });
  proxy.setFault({ kind: 'status', status: 403 }, '/limitranges');
  try {
    const starting = cachedReadClient(live, set, { mapper: new RESTMapper(live), syncTimeoutMs: 300 });
    await assert.rejects(
      starting.get(`/api/v1/namespaces/${NS}/limitranges/any`),
      /^Error: timed out after 300 ms waiting for the cache of \/api\/v1\/limitranges to sync for a read: injected fault$/,
    );
  } finally {
    proxy.setFault({ kind: 'pass' });
    await set.stop();
  }
});

test('a kind the cache narrows by a selector gets no informer from a read (it could never answer one): the read goes to the API', async () => {
  const set = new InformerSet(live, {}, undefined, { defaultLabelSelector: 'app=x' });
  try {
    const starting = cachedReadClient(live, set, { mapper: new RESTMapper(live), readerFailOnMissingInformer: false });
    const gets = proxy.count('/serviceaccounts/default');
    assert.equal((await starting.get<CM>(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).metadata.name, 'default');
    assert.equal(set.all().length, 0, 'no informer started');
    assert.equal(proxy.count('/serviceaccounts/default'), gets + 1, 'read from the API');
  } finally {
    await set.stop();
  }
});
