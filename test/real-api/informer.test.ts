/**
 * Informers against a real kube-apiserver (a control plane of this file's own where one can be started: it is
 * restarted; on an existing cluster the restart case skips), through a
 * counting proxy: the first list is served from the watch cache (`resourceVersion=0`), the watch starts from the
 * list's version and follows adds, updates and deletes; after the API server restarts, its new watch cache no
 * longer holds the informer's version, the re-watch gets 410 Gone, and the informer re-lists and catches up.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from '../../packages/ctrlmetrics/src/kube/informer.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { KubeObject } from '../../packages/ctrlmetrics/src/controller/types.js';
import { eventually } from '../controller/helpers/exposition.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { FRESH_KUBE_SKIP, REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';

const NS = runName('real-informer');
const COLLECTION = `/api/v1/namespaces/${NS}/configmaps`;

function cm(name: string, data: Record<string, string> = {}, labels: Record<string, string> = { app: 'inf' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data };
}

describe('informers on a real kube-apiserver', { skip: REAL_KUBE_SKIP, timeout: 180_000 }, () => {
  let kube: RealKube;
  let proxy: FaultProxy;
  let inf: Informer<KubeObject>;
  let client: KubeClient;
  const events: string[] = [];

  before(async () => {
    kube = await startRealKube({ fresh: !FRESH_KUBE_SKIP });
    proxy = new FaultProxy(kube.url, kube.caPem);
    await proxy.start();
    await kube.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    // a bearer token: the proxy cannot pass a client certificate on
    const token = await kube.serviceAccountToken(NS, 'watcher');
    await kube.admin.create('/apis/rbac.authorization.k8s.io/v1/namespaces/' + NS + '/rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'watcher-view', namespace: NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'watcher', namespace: NS }],
    });
    client = new KubeClient({ server: proxy.url, ca: proxy.caPem, token });
    inf = new Informer<KubeObject>(client, {
      path: COLLECTION,
      labelSelector: 'app=inf',
      backoffBaseMs: 50,
      backoffMaxMs: 400,
      watchTimeoutSeconds: 60,
    });
    inf.addHandler({
      onAdd: (o) => events.push(`add ${o.metadata?.name}`),
      onUpdate: (o, n) => {
        if (o.metadata?.resourceVersion !== n.metadata?.resourceVersion)
          events.push(`update ${n.metadata?.name} ${(n as { data?: Record<string, string> }).data?.v}`);
      },
      onDelete: (o) => events.push(`delete ${o.metadata?.name}`),
    });
  });

  after(async () => {
    await inf?.stop();
    client?.close();
    await proxy?.stop();
    await kube?.stop();
  });

  test('lists from the watch cache (resourceVersion=0), then watches from the list and follows changes', async () => {
    await kube.admin.create(COLLECTION, cm('before'));
    await kube.admin.create(COLLECTION, cm('unlabelled', {}, { app: 'other' }));
    inf.start();
    assert.equal(await inf.waitForSync(15_000), true);
    assert.deepEqual(events, ['add before'], 'the selector is applied by the server');
    const list = proxy.requests.find((r) => r.startsWith(`GET ${COLLECTION}?`) && !r.includes('watch='));
    assert.match(list ?? '', /[?&]resourceVersion=0(&|$)/, `the first list: ${list}`);
    const listed = (await kube.admin.get<{ metadata: { resourceVersion: string } }>(COLLECTION)).metadata
      .resourceVersion;
    await eventually(() => proxy.requests.some((r) => r.includes('watch=')), 'the watch', 10_000);
    const watch = proxy.requests.find((r) => r.includes('watch='))!;
    assert.match(watch, /allowWatchBookmarks=true/);
    const from = Number(/resourceVersion=(\d+)/.exec(watch)?.[1]);
    assert.ok(from > 0 && from <= Number(listed), `the watch starts at the list's version (${watch}; now ${listed})`);

    await kube.admin.create(COLLECTION, cm('after'));
    await kube.admin.mergePatch(`${COLLECTION}/after`, { data: { v: '2' } });
    await kube.admin.delete(`${COLLECTION}/before`);
    await eventually(() => events.length >= 4, 'watch events', 10_000);
    assert.deepEqual(events, ['add before', 'add after', 'update after 2', 'delete before']);
    assert.deepEqual(
      inf.list().map((o) => o.metadata?.name),
      ['after'],
    );
    assert.equal(inf.stats.lists, 1, 'no re-list');
  });

  test(
    'after an API server restart the old version is gone (410): the informer re-lists and catches up',
    { skip: FRESH_KUBE_SKIP },
    async () => {
      await proxy.down();
      // while the informer is away: changes that move the resourceVersion past its own
      await kube.admin.create(COLLECTION, cm('while-away'));
      await kube.admin.delete(`${COLLECTION}/after`);
      kube = await kube.restart();
      proxy.retarget(kube.url);
      await proxy.up();
      await eventually(
        () => events.includes('add while-away') && events.includes('delete after'),
        'the informer to catch up',
        30_000,
      );
      assert.ok(inf.stats.relistsOnGone >= 1, `re-listed on 410 Gone (${JSON.stringify(inf.stats)})`);
      await eventually(() => inf.health().healthy, 'healthy again', 10_000);
      assert.deepEqual(
        inf.list().map((o) => o.metadata?.name),
        ['while-away'],
      );
      // and it follows the restarted server's watch
      await kube.admin.create(COLLECTION, cm('last'));
      await eventually(() => events.includes('add last'), 'a watch event after the restart', 10_000);
    },
  );
});
