/**
 * Reads without copies, through a manager on the authority: `ctx.cache` hands out the cached objects frozen (a
 * reconcile writing to one gets a TypeError, the cache stays as the API left it), and with the manager's
 * `cache.unsafeDisableDeepCopy` so do `ctx.client` and `mgr.client` reads answered from the cache (the same object
 * each time); without it they are copies the reconcile may change.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from '../helpers/process.js';

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(() => cluster?.stop());

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
type CM = KubeObject & { data?: Record<string, string> };

interface Seen {
  cacheFrozen: boolean;
  cacheWrite: string;
  sameObject: boolean;
  objectFrozen: boolean;
  objectWrite: string;
}

async function observe(unsafeDisableDeepCopy: boolean, name: string): Promise<Seen> {
  let seen: Seen | undefined;
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    cache: { unsafeDisableDeepCopy },
  });
  const attempt = (f: () => void) => {
    try {
      f();
      return 'written';
    } catch (err) {
      return (err as Error).constructor.name;
    }
  };
  mgr.add(
    new Controller({
      name: `frozen-${name}`,
      watches: [CM],
      reconciler: async (req, ctx) => {
        if (req.name !== name) return;
        const cached = ctx.cache.get<CM>('ConfigMap', req.namespace, req.name)!;
        const a = await ctx.client.get<CM>(CM, { namespace: req.namespace, name: req.name });
        const b = await ctx.client.get<CM>(CM, { namespace: req.namespace, name: req.name });
        seen = {
          cacheFrozen: Object.isFrozen(cached) && Object.isFrozen(cached.data),
          cacheWrite: attempt(() => void (cached.data!.k = 'changed')),
          sameObject: a === b,
          objectFrozen: Object.isFrozen(a) && Object.isFrozen(a.data),
          objectWrite: attempt(() => void (a.data!.k = 'changed')),
        };
      },
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    await cluster.admin.create('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data: { k: 'v' },
    });
    return await eventually(() => seen, `a reconcile of ${name}`, 10_000, 20);
  } finally {
    stop.abort();
    await running;
  }
}

test('ctx.cache is frozen; by default ctx.client reads are copies the reconcile may change', async () => {
  assert.deepEqual(await observe(false, 'copies'), {
    cacheFrozen: true,
    cacheWrite: 'TypeError',
    sameObject: false,
    objectFrozen: false,
    objectWrite: 'written',
  });
  const stored = await cluster.admin.get<CM>('/api/v1/namespaces/default/configmaps/copies');
  assert.deepEqual(stored.data, { k: 'v' });
});

test('cache.unsafeDisableDeepCopy: ctx.client reads hand out the cached object itself, frozen', async () => {
  assert.deepEqual(await observe(true, 'shared'), {
    cacheFrozen: true,
    cacheWrite: 'TypeError',
    sameObject: true,
    objectFrozen: true,
    objectWrite: 'TypeError',
  });
});
