/**
 * `ctx.cache` keyed by group, version and kind, against the embedded authority: Events watched in core/v1 and in
 * events.k8s.io/v1 are two caches (the kind name alone is ambiguous and says so), two watches of one kind with
 * other selectors are read as one, and a kind the controller does not watch is a NotCachedError, not an undefined
 * that would read as "deleted".
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { NotCachedError } from '../../packages/ctrlmetrics/src/exports/controller.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from './helpers/exposition.js';

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(async () => {
  await cluster?.stop();
});

test('ctx.cache reads by apiVersion and kind; an ambiguous or unwatched kind throws NotCachedError', async () => {
  const ns = 'cache-reader';
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await cluster.admin.create(`/api/v1/namespaces/${ns}/events`, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e1', namespace: ns },
    involvedObject: { kind: 'ConfigMap', name: 'cm', namespace: ns, apiVersion: 'v1' },
    reason: 'Tested',
    message: 'seen through both APIs',
    type: 'Normal',
    source: { component: 'test' },
  });
  for (const [name, labels] of [
    ['a', { a: '1' }],
    ['b', { b: '1' }],
  ] as const) {
    await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns, labels },
    });
  }
  const seen: Record<string, unknown> = {};
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
  });
  mgr.add(
    new Controller({
      name: 'cache-reader',
      watches: [
        { apiVersion: 'v1', kind: 'Event', namespace: ns },
        { apiVersion: 'events.k8s.io/v1', kind: 'Event', namespace: ns },
        { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'a=1' },
        { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'b=1' },
      ],
      reconciler: async (req, ctx) => {
        if (req.name !== 'e1') return;
        const attempt = (f: () => unknown) => {
          try {
            return f();
          } catch (err) {
            return `${(err as Error).name}: ${(err as Error).message}`;
          }
        };
        seen.ambiguous = attempt(() => ctx.cache.get('Event', ns, 'e1'));
        seen.core = ctx.cache.get<{ message: string }>({ apiVersion: 'v1', kind: 'Event' }, ns, 'e1')?.message;
        seen.events = ctx.cache.get<{ note: string }>(
          { apiVersion: 'events.k8s.io/v1', kind: 'Event' },
          ns,
          'e1',
        )?.note;
        seen.unwatched = attempt(() => ctx.cache.get('Secret', ns, 'e1'));
        seen.unwatchedList = attempt(() => ctx.cache.list({ apiVersion: 'apps/v1', kind: 'Deployment' }));
        seen.isNotCached = (() => {
          try {
            ctx.cache.list('Secret');
            return false;
          } catch (err) {
            return err instanceof NotCachedError;
          }
        })();
        seen.configMaps = ctx.cache
          .list<KubeObject>('ConfigMap', { namespace: ns })
          .map((o) => o.metadata?.name)
          .sort();
        seen.missing = ctx.cache.get('ConfigMap', ns, 'none');
      },
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    await eventually(() => 'missing' in seen, 'the reconcile of e1', 10_000, 20);
  } finally {
    stop.abort();
    await running;
  }
  assert.deepEqual(seen, {
    ambiguous:
      "NotCachedError: controller cache-reader watches Event in v1 and events.k8s.io/v1: name the one to read, ctx.cache.get({ apiVersion: 'v1', kind: 'Event' }, namespace, name)",
    core: 'seen through both APIs',
    events: 'seen through both APIs',
    unwatched:
      'NotCachedError: controller cache-reader does not watch Secret, so ctx.cache does not hold it (it watches v1/Event, events.k8s.io/v1/Event, v1/ConfigMap): read it with ctx.client (from the API), or add a watch',
    unwatchedList:
      'NotCachedError: controller cache-reader does not watch Deployment (apps/v1), so ctx.cache does not hold it (it watches v1/Event, events.k8s.io/v1/Event, v1/ConfigMap): read it with ctx.client (from the API), or add a watch',
    isNotCached: true,
    configMaps: ['a', 'b'],
    missing: undefined,
  });
});
