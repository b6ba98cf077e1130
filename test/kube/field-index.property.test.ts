/**
 * Field indexes stay correct over any sequence of adds, updates and deletes: after every step, what the index lists
 * for each value (over all namespaces and per namespace) equals a scan of a plain model of the cache. Then the
 * manager's indexes through a reconcile: `ctx.cache.list(kind, { matchingFields })` against the authority follows
 * creates, updates (the value moving) and deletes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FieldIndex } from '../../packages/ctrlmetrics/src/kube/field-index.js';
import { Controller, Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { propertyParams } from '../helpers/property.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from '../helpers/process.js';

interface Obj {
  namespace: string;
  owners: string[];
}

const step = fc.oneof(
  fc.record({
    op: fc.constant('set' as const),
    key: fc.integer({ min: 0, max: 7 }),
    namespace: fc.constantFrom('a', 'b'),
    owners: fc.array(fc.constantFrom('x', 'y', 'z', ''), { maxLength: 3 }),
  }),
  fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 7 }) }),
);

test('an index lists what a scan of the cache finds, after every add, update and delete', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      const index = new FieldIndex<Obj>('owner', (o) => o.owners);
      const model = new Map<string, Obj>();
      for (const s of steps) {
        const key = `k${s.key}`;
        if (s.op === 'set') {
          const obj = { namespace: s.namespace, owners: s.owners };
          model.set(key, obj);
          index.set(key, obj, obj.namespace);
        } else {
          model.delete(key);
          index.delete(key);
        }
        for (const value of ['x', 'y', 'z', '']) {
          const scan = (ns?: string) =>
            [...model]
              .filter(([, o]) => o.owners.includes(value) && (ns === undefined || o.namespace === ns))
              .map(([k]) => k)
              .sort();
          assert.deepEqual(index.keys(value).sort(), scan(), `all namespaces, ${JSON.stringify(value)}`);
          for (const ns of ['a', 'b'])
            assert.deepEqual(index.keys(value, ns).sort(), scan(ns), `namespace ${ns}, ${JSON.stringify(value)}`);
        }
      }
    }),
    propertyParams(300),
  );
});

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(() => cluster?.stop());

test('mgr.indexField: a reconcile lists the ConfigMaps of an owner from the index as they are created, moved and deleted', async () => {
  const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
  const seen = new Map<string, string[]>();
  let unindexed = '';
  let unwatched = '';
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
  });
  mgr.indexField<KubeObject>(CM, 'data.owner', (o) => (o as { data?: { owner?: string } }).data?.owner);
  mgr.add(
    new Controller({
      name: 'owners',
      watches: [CM],
      reconciler: async (_req, ctx) => {
        for (const owner of ['alice', 'bob']) {
          const fromCache = ctx.cache
            .list<KubeObject>('ConfigMap', { matchingFields: { 'data.owner': owner }, namespace: 'default' })
            .map((o) => String(o.metadata?.name))
            .sort();
          // the object client answers the same from the same index (controller-runtime's client.MatchingFields)
          const fromClient = (
            await ctx.client.list<KubeObject>(CM, { matchingFields: { 'data.owner': owner }, namespace: 'default' })
          )
            .map((o) => String(o.metadata?.name))
            .sort();
          seen.set(
            owner,
            JSON.stringify(fromClient) === JSON.stringify(fromCache)
              ? fromCache
              : ['client and cache differ', ...fromClient],
          );
        }
        unwatched = await ctx.client
          .list({ apiVersion: 'v1', kind: 'Secret' }, { matchingFields: { 'data.owner': 'x' } })
          .then(
            () => 'no error',
            (err: Error) => err.message,
          );
        try {
          ctx.cache.list('ConfigMap', { matchingFields: { 'data.team': 'x' } });
          unindexed = 'no error';
        } catch (err) {
          unindexed = (err as Error).message;
        }
      },
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    const cms = '/api/v1/namespaces/default/configmaps';
    const cm = (name: string, owner: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data: { owner },
    });
    await cluster.admin.create(cms, cm('one', 'alice'));
    await cluster.admin.create(cms, cm('two', 'alice'));
    await cluster.admin.create(cms, cm('three', 'bob'));
    const settled = (alice: string[], bob: string[]) => () =>
      JSON.stringify([seen.get('alice'), seen.get('bob')]) === JSON.stringify([alice, bob]) || undefined;
    await eventually(settled(['one', 'two'], ['three']), 'the index after the creates', 10_000, 20);
    await cluster.admin.mergePatch(`${cms}/two`, { data: { owner: 'bob' } });
    await eventually(settled(['one'], ['three', 'two']), 'the index after the update moved two to bob', 10_000, 20);
    await cluster.admin.delete(`${cms}/three`);
    await eventually(settled(['one'], ['two']), 'the index after the delete', 10_000, 20);
    assert.equal(
      unindexed,
      'index with name field:data.team does not exist (add it with mgr.indexField before the manager starts)',
    );
    assert.equal(
      unwatched,
      'list Secret (v1) with matchingFields: the controller owners does not watch it, so no cache of it is indexed',
    );
  } finally {
    stop.abort();
    await running;
  }
});
