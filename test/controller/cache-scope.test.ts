/**
 * The manager's cache scope (controller-runtime's cache.Options), on the authority: `defaultNamespaces` turns a
 * watch over all namespaces into one list/watch per cached namespace (reconciles, `ctx.cache` and the index see
 * only those namespaces), `byObject` narrows one kind by its own namespaces and selectors instead of the defaults
 * (here metadata only, so its cache holds PartialObjectMetadata and whole reads go to the API),
 * a watch pinned to a namespace the cache does not hold fails the start naming it, and a bad namespace is refused.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from '../helpers/process.js';

let cluster: TestCluster;
const NAMESPACES = ['team-a', 'team-b', 'team-c'];

before(async () => {
  cluster = await startTestCluster();
  for (const name of NAMESPACES)
    await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const ns of NAMESPACES) {
    await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', labels: { owner: 'x' } },
      data: { ns },
    });
    for (const [name, labels] of [
      ['labelled', { app: 'x' }],
      ['plain', {}],
    ] as const) {
      await cluster.admin.create(`/api/v1/namespaces/${ns}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, labels },
      });
    }
  }
});
after(() => cluster?.stop());

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const keyOf = (o: KubeObject) => `${String(o.metadata?.namespace)}/${String(o.metadata?.name)}`;
/** Every namespace also holds the kube-root-ca.crt ConfigMap the API server publishes; the test's own are the rest. */
const ours = (keys: string[]) => keys.filter((k) => !k.endsWith('/kube-root-ca.crt')).sort();

test('defaultNamespaces and byObject: reconciles, ctx.cache and the index hold only what the scope says', async () => {
  const reconciled = new Set<string>();
  let cached:
    | {
        configMaps: string[];
        secrets: string[];
        secretKinds: string[];
        secretRead: string;
        indexed: string[];
        outside?: unknown;
      }
    | undefined;
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    cache: {
      defaultNamespaces: ['team-a', 'team-b'],
      // Secrets: their own scope instead of the defaults
      byObject: [{ ...SECRET, namespaces: ['team-b', 'team-c'], labelSelector: 'app=x', metadataOnly: true }],
    },
  });
  mgr.indexField<KubeObject>(CM, 'metadata.labels.owner', (o) => o.metadata?.labels?.owner);
  mgr.add(
    new Controller({
      name: 'scoped',
      watches: [CM, { ...SECRET, enqueue: () => [] }],
      reconciler: async (req, ctx) => {
        reconciled.add(`${req.namespace}/${req.name}`);
        cached = {
          configMaps: ours(ctx.cache.list<KubeObject>('ConfigMap').map(keyOf)),
          secrets: ctx.cache.list<KubeObject>('Secret').map(keyOf).sort(),
          // metadata only: no data in the cache, and a read of a whole Secret goes to the API
          secretKinds: [
            ...new Set(
              ctx.cache
                .list<KubeObject & { data?: unknown }>('Secret')
                .map((o) => `${String(o.kind)} data=${o.data === undefined ? 'none' : 'some'}`),
            ),
          ],
          secretRead: String(
            (await ctx.client.get<KubeObject>(SECRET, { namespace: 'team-b', name: 'labelled' })).kind,
          ),
          indexed: ctx.cache
            .list<KubeObject>('ConfigMap', { matchingFields: { 'metadata.labels.owner': 'x' } })
            .map(keyOf)
            .sort(),
          outside: ctx.cache.get('ConfigMap', 'team-c', 'settings'),
        };
      },
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    await eventually(() => ours([...reconciled]).length === 2, 'both cached ConfigMaps reconciled', 10_000, 20);
    // a change in a namespace outside the cache reaches no reconcile; one inside does
    await cluster.admin.mergePatch('/api/v1/namespaces/team-c/configmaps/settings', { data: { changed: 'yes' } });
    await cluster.admin.create('/api/v1/namespaces/team-b/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'later' },
    });
    await eventually(
      () => reconciled.has('team-b/later'),
      'the ConfigMap created in a cached namespace reconciled',
      10_000,
      20,
    );
    assert.deepEqual(ours([...reconciled]), ['team-a/settings', 'team-b/later', 'team-b/settings']);
    assert.ok(![...reconciled].some((k) => k.startsWith('team-c/')), 'nothing of team-c');
    assert.deepEqual(cached, {
      configMaps: ['team-a/settings', 'team-b/later', 'team-b/settings'],
      secrets: ['team-b/labelled', 'team-c/labelled'],
      secretKinds: ['PartialObjectMetadata data=none'],
      secretRead: 'Secret',
      indexed: ['team-a/settings', 'team-b/settings'],
      outside: undefined,
    });
  } finally {
    stop.abort();
    await running;
  }
});

test('a watch pinned to a namespace the cache does not hold fails the start, naming it', async () => {
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    cache: { defaultNamespaces: ['team-a'] },
  });
  mgr.add(
    new Controller({ name: 'pinned', watches: [{ ...CM, namespace: 'team-c' }], reconciler: async () => undefined }),
  );
  await assert.rejects(
    mgr.start(new AbortController().signal),
    /cannot watch ConfigMap in namespace team-c: the manager's cache holds only namespaces team-a \(cache\.defaultNamespaces\)/,
  );
});

test('a cache namespace that is no namespace name is refused at start', async () => {
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    cache: { defaultNamespaces: ['Team A'] },
  });
  mgr.add(new Controller({ name: 'badns', watches: [CM], reconciler: async () => undefined }));
  await assert.rejects(mgr.start(new AbortController().signal), /cache namespaces: "Team A" is not a namespace name/);
});
