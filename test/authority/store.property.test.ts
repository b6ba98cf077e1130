// The store keeps each type's objects in etcd's key order (namespace/name) through any mix of bulk loading, puts
// and removals; a namespace's list holds exactly its objects. The oracle sorts the surviving keys itself.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Store } from '../../packages/envtest/src/store.js';
import { propertyParams } from '../helpers/property.js';

const ns = fc.constantFrom('a', 'a-b', 'a.b', 'ab', 'b', 'kube-system');
const name = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,6}$/);
const op = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), ns, name }),
  fc.record({ kind: fc.constant('remove' as const), ns, name }),
);

it('lists in key order and by namespace after any loads, puts and removals', async () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ ns, name }), { maxLength: 30 }),
      fc.array(op, { maxLength: 60 }),
      (loaded, ops) => {
        const store = new Store();
        const live = new Map<string, { ns: string; name: string }>();
        const key = (o: { ns: string; name: string }) => `${o.ns}/${o.name}`;
        const objects: Record<string, Array<{ metadata: { name: string; namespace: string } }>> = { configmaps: [] };
        for (const o of loaded) {
          if (live.has(key(o))) continue;
          live.set(key(o), o);
          objects.configmaps.push({ metadata: { name: o.name, namespace: o.ns } });
        }
        store.load({ resourceVersion: 1, objects });
        for (const o of ops) {
          if (o.kind === 'put') {
            store.put('configmaps', { metadata: { name: o.name, namespace: o.ns } });
            live.set(key(o), o);
          } else {
            store.remove('configmaps', o.ns, o.name);
            live.delete(key(o));
          }
        }
        const byKey = (xs: string[]) => [...xs].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
        const listed = store.list('configmaps').map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        assert.deepEqual(listed, byKey([...live.keys()]));
        for (const n of ['a', 'a-b', 'ab', 'kube-system', 'none']) {
          const inNs = store.list('configmaps', n).map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
          assert.deepEqual(inNs, byKey([...live.values()].filter((o) => o.ns === n).map(key)), `namespace ${n}`);
        }
      },
    ),
    propertyParams(300),
  );
});
