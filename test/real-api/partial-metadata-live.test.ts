/**
 * Metadata-only reads, side by side on a real kube-apiserver and the authority: `Accept:
 * application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` answered with the objects' metadata only (a
 * get, a list with its list metadata, a watch's events), the wrong form or an unknown one refused 406 in the same
 * words, and a metadata-only informer (what `metadataOnly: true` watches use) caching the same thing from both;
 * likewise an informer with the stripManagedFields transform over server-side applied objects.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError, type KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { Informer } from '../../packages/ctrlmetrics/src/kube/informer.js';
import { stripManagedFields } from '../../packages/ctrlmetrics/src/kube/transforms.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';

type Any = any;

const NS = runName('partial-metadata');
const PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** What may differ between two servers (identities, times, versions, field managers' timestamps) left out. */
function shape(o: Any): Any {
  if (Array.isArray(o)) return o.map(shape);
  if (!o || typeof o !== 'object') return o;
  const out: Any = {};
  for (const [k, v] of Object.entries(o)) {
    if (['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'continue'].includes(k)) out[k] = '<varies>';
    else out[k] = shape(v);
  }
  return out;
}

describe(
  'PartialObjectMetadata: a real kube-apiserver and the authority answer alike',
  { skip: REAL_KUBE_SKIP, timeout: 180_000 },
  () => {
    let kube: RealKube;
    let authority: TestCluster;
    const clients = () => [kube.admin, authority.admin] as KubeClient[];
    const bothAnswer = (f: (c: KubeClient) => Promise<unknown>) =>
      Promise.all(
        clients().map((c) =>
          f(c).then(
            (v) => shape(v),
            (err: unknown) =>
              err instanceof KubeApiError ? `${err.status} ${err.reason} ${err.message}` : String(err),
          ),
        ),
      );

    before(async () => {
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
      for (const c of clients()) {
        await c.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
        for (const name of ['a', 'b', 'c']) {
          await c.create(`/api/v1/namespaces/${NS}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, labels: { app: 'meta' }, annotations: { note: name } },
            data: { big: 'x'.repeat(1000) },
          });
        }
      }
    });
    after(async () => {
      await kube?.admin.delete(`/api/v1/namespaces/${NS}`).catch(() => undefined);
      await Promise.all([kube?.stop(), authority?.stop()]);
    });

    test('a get answers the metadata as PartialObjectMetadata', async () => {
      const [real, ours] = await bothAnswer((c) =>
        c.get(`/api/v1/namespaces/${NS}/configmaps/a`, { headers: { Accept: PARTIAL } }),
      );
      assert.equal(real.kind, 'PartialObjectMetadata');
      assert.equal(real.data, undefined);
      assert.deepStrictEqual(ours, real);
    });

    test('a list answers a PartialObjectMetadataList, paged as the API pages', async () => {
      const [real, ours] = await bothAnswer((c) =>
        c.get(`/api/v1/namespaces/${NS}/configmaps`, {
          headers: { Accept: PARTIAL_LIST },
          query: { labelSelector: 'app=meta', limit: 2 },
        }),
      );
      assert.equal(real.kind, 'PartialObjectMetadataList');
      assert.deepStrictEqual(
        real.items.map((i: Any) => i.metadata.name),
        ['a', 'b'],
      );
      assert.deepStrictEqual(ours, real);
    });

    test('the wrong form, or only forms the server does not offer: 406 in the same words', async () => {
      for (const [path, accept] of [
        [`/api/v1/namespaces/${NS}/configmaps`, PARTIAL],
        [`/api/v1/namespaces/${NS}/configmaps/a`, PARTIAL_LIST],
        [`/api/v1/namespaces/${NS}/configmaps`, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2'],
      ] as const) {
        const [real, ours] = await bothAnswer((c) => c.get(path, { headers: { Accept: accept } }));
        assert.match(String(real), /^406 NotAcceptable /);
        assert.equal(ours, real, `${path} with ${accept}`);
      }
    });

    test('a watch streams PartialObjectMetadata events', async () => {
      const events = await Promise.all(
        clients().map(
          (c) =>
            new Promise<string[]>((resolve, reject) => {
              const seen: string[] = [];
              const h = c.watch<Any>(
                `/api/v1/namespaces/${NS}/configmaps`,
                { labelSelector: 'app=meta', timeoutSeconds: 1 },
                (ev) =>
                  seen.push(
                    `${ev.type} ${ev.object.kind} ${ev.object.metadata.name} data=${ev.object.data === undefined ? 'none' : 'some'}`,
                  ),
                { accept: PARTIAL },
              );
              h.done.then(() => resolve(seen.sort()), reject);
            }),
        ),
      );
      assert.deepStrictEqual(events[1], events[0]);
      assert.deepStrictEqual(events[0], [
        'ADDED PartialObjectMetadata a data=none',
        'ADDED PartialObjectMetadata b data=none',
        'ADDED PartialObjectMetadata c data=none',
      ]);
    });

    test('an informer with the stripManagedFields transform caches the same server-side applied objects from both, managedFields gone', async () => {
      for (const c of clients()) {
        for (const name of ['applied-1', 'applied-2']) {
          await c.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/${name}`, {
            body: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, labels: { app: 'applied' } },
              data: { k: name },
            },
            contentType: 'application/apply-patch+yaml',
            query: { fieldManager: 'transform-test' },
          });
        }
      }
      const cached = await Promise.all(
        clients().map(async (c) => {
          const inf = new Informer<Any>(c, {
            path: `/api/v1/namespaces/${NS}/configmaps`,
            labelSelector: 'app=applied',
            transform: stripManagedFields,
          });
          inf.start();
          try {
            assert.ok(await inf.waitForSync(20_000));
            const raw = await c.get<Any>(`/api/v1/namespaces/${NS}/configmaps/applied-1`);
            assert.equal(raw.metadata.managedFields[0].manager, 'transform-test', 'the API has them');
            // kube-apiserver leaves apiVersion and kind out of a built-in kind's list items: the informer gives them
            // back from the list's, so what it caches from the first list has its type as a watched object does
            return shape(inf.list().sort((x: Any, y: Any) => (x.metadata.name < y.metadata.name ? -1 : 1)));
          } finally {
            await inf.stop();
          }
        }),
      );
      assert.deepStrictEqual(cached[1], cached[0]);
      assert.ok(
        cached[0].every((o: Any) => o.apiVersion === 'v1' && o.kind === 'ConfigMap'),
        'listed objects carry their type',
      );
      assert.deepStrictEqual(
        cached[0].map((o: Any) => [o.metadata.name, 'managedFields' in o.metadata, o.data.k]),
        [
          ['applied-1', false, 'applied-1'],
          ['applied-2', false, 'applied-2'],
        ],
      );
    });

    test('a metadata-only informer caches the same metadata from both', async () => {
      const cached = await Promise.all(
        clients().map(async (c) => {
          const inf = new Informer<Any>(c, {
            path: `/api/v1/namespaces/${NS}/configmaps`,
            labelSelector: 'app=meta',
            metadataOnly: true,
          });
          inf.start();
          try {
            assert.ok(await inf.waitForSync(20_000));
            return shape(inf.list().sort((x: Any, y: Any) => (x.metadata.name < y.metadata.name ? -1 : 1)));
          } finally {
            await inf.stop();
          }
        }),
      );
      assert.deepStrictEqual(cached[1], cached[0]);
      assert.deepStrictEqual(
        cached[0].map((o: Any) => [o.kind, o.metadata.name, o.metadata.annotations.note, o.data]),
        [
          ['PartialObjectMetadata', 'a', 'a', undefined],
          ['PartialObjectMetadata', 'b', 'b', undefined],
          ['PartialObjectMetadata', 'c', 'c', undefined],
        ],
      );
    });
  },
);
