import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { Informer } from '../../packages/ctrlmetrics/src/kube/informer.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { KubeObject } from '../../packages/ctrlmetrics/src/controller/types.js';
import { startAuthority } from '../../packages/envtest/src/index.js';
import { startTestCluster } from '../helpers/cluster.js';
import { eventually } from './helpers/exposition.js';
import { FaultProxy } from '../helpers/fault-proxy.js';

const FAST = { backoffBaseMs: 50, backoffMaxMs: 400, watchTimeoutSeconds: 30 };

function cm(
  ns: string,
  name: string,
  data: Record<string, string> = {},
  labels: Record<string, string> = { app: 'inf' },
) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data };
}

const tmpDirs: string[] = [];
after(async () => {
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});

test('lists, then follows adds, updates and deletes through the watch (selector applied server-side)', async () => {
  const cluster = await startTestCluster();
  const inf = new Informer<KubeObject>(new KubeClient(cluster.authority.restConfig), {
    path: '/api/v1/namespaces/inf-a/configmaps',
    labelSelector: 'app=inf',
    ...FAST,
  });
  try {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'inf-a' },
    });
    await cluster.admin.create('/api/v1/namespaces/inf-a/configmaps', cm('inf-a', 'before'));
    await cluster.admin.create('/api/v1/namespaces/inf-a/configmaps', cm('inf-a', 'unlabelled', {}, { app: 'other' }));
    const events: string[] = [];
    inf.addHandler({
      onAdd: (o) => events.push(`add ${o.metadata?.name}`),
      onUpdate: (_o, n) =>
        events.push(`update ${n.metadata?.name} ${(n as { data?: Record<string, string> }).data?.v}`),
      onDelete: (o) => events.push(`delete ${o.metadata?.name}`),
    });
    inf.start();
    assert.equal(await inf.waitForSync(10_000), true);
    assert.deepEqual(events, ['add before'], 'the list delivers only matching objects');
    await cluster.admin.create('/api/v1/namespaces/inf-a/configmaps', cm('inf-a', 'after'));
    await cluster.admin.mergePatch('/api/v1/namespaces/inf-a/configmaps/after', { data: { v: '2' } });
    await cluster.admin.delete('/api/v1/namespaces/inf-a/configmaps/before');
    await eventually(() => events.length >= 4, 'watch events');
    assert.deepEqual(events, ['add before', 'add after', 'update after 2', 'delete before']);
    assert.deepEqual(
      inf.list().map((o) => o.metadata?.name),
      ['after'],
    );
    assert.equal(inf.get('inf-a/after')?.metadata?.name, 'after');
    assert.deepEqual(inf.health(), { healthy: true });
  } finally {
    await inf.stop();
    await cluster.stop();
  }
});

test('a watch that ends (server timeout) is re-opened from the last resourceVersion without a re-list', async () => {
  const cluster = await startTestCluster();
  const inf = new Informer<KubeObject>(new KubeClient(cluster.authority.restConfig), {
    path: '/api/v1/namespaces/inf-b/configmaps',
    labelSelector: 'app=inf',
    ...FAST,
    watchTimeoutSeconds: 1, // the server closes each watch after 1–2 s
  });
  try {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'inf-b' },
    });
    const adds: string[] = [];
    inf.addHandler({ onAdd: (o) => adds.push(o.metadata!.name!) });
    inf.start();
    assert.equal(await inf.waitForSync(10_000), true);
    await eventually(() => inf.stats.watches >= 3, 'three watches', 15_000);
    await cluster.admin.create('/api/v1/namespaces/inf-b/configmaps', cm('inf-b', 'late'));
    await eventually(() => adds.length === 1, 'the add after reconnects');
    assert.deepEqual(adds, ['late']);
    assert.equal(inf.stats.lists, 1, 'no re-list for a normal watch end');
    assert.equal(inf.stats.failures, 0);
  } finally {
    await inf.stop();
    await cluster.stop();
  }
});

test('after the API restarts (same state, same port): reconnects with backoff, re-lists on 410 Gone, reports health', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-inf-'));
  tmpDirs.push(stateDir);
  let authority = await startAuthority({ listen: '127.0.0.1:0', stateDir });
  const port = new URL(authority.url).port;
  const admin = () => new KubeClient(authority.restConfig);
  const inf = new Informer<KubeObject>(new KubeClient(authority.restConfig), {
    path: '/api/v1/namespaces/inf-c/configmaps',
    labelSelector: 'app=inf',
    ...FAST,
    stuckAfterMs: 800,
  });
  try {
    await admin().create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'inf-c' } });
    await admin().create('/api/v1/namespaces/inf-c/configmaps', cm('inf-c', 'one'));
    const seen = new Set<string>();
    const deleted = new Set<string>();
    inf.addHandler({ onAdd: (o) => seen.add(o.metadata!.name!), onDelete: (o) => deleted.add(o.metadata!.name!) });
    inf.start();
    assert.equal(await inf.waitForSync(10_000), true);
    // a change the informer never sees (another collection) moves the resourceVersion past the informer's
    await admin().create('/api/v1/namespaces/inf-c/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'inf-c' },
    });
    await authority.stop();

    await eventually(() => !inf.health().healthy, 'unhealthy while the API is down', 10_000);
    assert.match(inf.health().reason ?? '', /no successful list or watch/);
    assert.ok(inf.stats.failures >= 1);

    authority = await startAuthority({ listen: `127.0.0.1:${port}`, stateDir });
    // changes made while the informer was away, and after the restart
    await admin().create('/api/v1/namespaces/inf-c/configmaps', cm('inf-c', 'two'));
    await admin().delete('/api/v1/namespaces/inf-c/configmaps/one');
    await eventually(() => seen.has('two') && deleted.has('one'), 'the informer to catch up after the restart', 15_000);
    assert.ok(
      inf.stats.relistsOnGone >= 1,
      `the old resourceVersion was gone: re-listed (${JSON.stringify(inf.stats)})`,
    );
    await eventually(() => inf.health().healthy, 'healthy again', 5_000);
    assert.deepEqual(
      inf.list().map((o) => o.metadata?.name),
      ['two'],
    );
  } finally {
    await inf.stop();
    await authority.stop();
  }
});

test("as client-go's reflector: watch cache first, re-list only on an error answer or 410 (from the last version, then a consistent list), re-watch on 429, sync events", async () => {
  const cluster = await startTestCluster();
  const proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
  await proxy.start();
  const client = new KubeClient({ ...cluster.authority.restConfig, server: proxy.url, ca: proxy.caPem });
  // watches end every 1–2 s, so a fault set for the next watch is met soon
  const inf = new Informer<KubeObject>(client, {
    path: '/api/v1/namespaces/inf-r/configmaps',
    ...FAST,
    watchTimeoutSeconds: 1,
  });
  const lists = () =>
    proxy.requests.filter((r) => r.startsWith('GET /api/v1/namespaces/inf-r/configmaps?') && !r.includes('watch=1'));
  const query = (r: string) => new URL(r.split(' ')[1], 'https://x').searchParams;
  try {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'inf-r' },
    });
    await cluster.admin.create('/api/v1/namespaces/inf-r/configmaps', cm('inf-r', 'a'));
    const syncs: string[] = [];
    inf.addHandler({
      onUpdate: (o, n) => o.metadata?.resourceVersion === n.metadata?.resourceVersion && syncs.push(n.metadata!.name!),
    });
    inf.start();
    assert.equal(await inf.waitForSync(10_000), true);
    assert.equal(lists().length, 1);
    assert.equal(query(lists()[0]).get('resourceVersion'), '0', 'the first list is served from the watch cache');
    assert.equal(query(lists()[0]).get('limit'), '500');

    // 429 on the watch: backoff and re-watch, no re-list
    proxy.setFault({ kind: 'status', status: 429 }, 'watch=1');
    await eventually(() => inf.stats.failures >= 2, 'two refused watches', 15_000, 20);
    proxy.setFault({ kind: 'pass' });
    await eventually(() => inf.stats.watches >= inf.stats.failures + 2, 'watching again', 15_000, 20);
    assert.equal(lists().length, 1, 'no re-list after 429');
    assert.equal(inf.stats.relistsOnError, 0);

    // 500 on the watch: a re-list from the last synced version, unpaginated; unchanged objects are sync events
    const rv = (
      await cluster.admin.get<{ metadata: { resourceVersion: string } }>('/api/v1/namespaces/inf-r/configmaps')
    ).metadata.resourceVersion;
    proxy.setFault({ kind: 'status', status: 500 }, 'watch=1');
    await eventually(() => inf.stats.relistsOnError >= 1, 'a re-list after an error answer', 15_000, 20);
    proxy.setFault({ kind: 'pass' });
    await eventually(() => lists().length >= 2, 'the re-list', 15_000, 20);
    const relist = query(lists()[1]);
    assert.notEqual(relist.get('resourceVersion'), '0');
    assert.ok(
      Number(relist.get('resourceVersion')) >= Number(rv),
      `from the last synced version (${relist.get('resourceVersion')} ≥ ${rv})`,
    );
    assert.equal(relist.get('limit'), null, 'not paginated: served from the watch cache');
    await eventually(() => syncs.includes('a'), 'a sync event for the unchanged object', 5_000, 20);

    // 410 on the watch: a consistent list ("")
    const before = lists().length;
    proxy.setFault({ kind: 'status', status: 410 }, 'watch=1');
    await eventually(() => inf.stats.relistsOnGone >= 1, 'a re-list after 410', 15_000, 20);
    proxy.setFault({ kind: 'pass' });
    // (a re-list still due to the 500 may come first, from the last version)
    const consistent = await eventually(
      () =>
        lists()
          .slice(before)
          .map(query)
          .find((q) => q.get('resourceVersion') === null),
      'a consistent list (resourceVersion "") after the 410',
      15_000,
      20,
    );
    assert.equal(consistent.get('limit'), '500', 'paginated, as client-go lists "" ');
  } finally {
    await inf.stop();
    client.close();
    await proxy.stop();
    await cluster.stop();
  }
});

test('resync re-delivers every cached object as an update, with no API call', async () => {
  const cluster = await startTestCluster();
  const inf = new Informer<KubeObject>(new KubeClient(cluster.authority.restConfig), {
    path: '/api/v1/namespaces/inf-d/configmaps',
    ...FAST,
    resyncMs: 200,
  });
  try {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'inf-d' },
    });
    await cluster.admin.create('/api/v1/namespaces/inf-d/configmaps', cm('inf-d', 'a'));
    await cluster.admin.create('/api/v1/namespaces/inf-d/configmaps', cm('inf-d', 'b'));
    const resynced = new Map<string, number>();
    inf.addHandler({
      onUpdate: (o, n) => {
        // a resync hands the same object as old and new
        if (o === n) resynced.set(n.metadata!.name!, (resynced.get(n.metadata!.name!) ?? 0) + 1);
      },
    });
    inf.start();
    assert.equal(await inf.waitForSync(10_000), true);
    await eventually(
      () => (resynced.get('a') ?? 0) >= 2 && (resynced.get('b') ?? 0) >= 2,
      'two resyncs of both objects',
      5_000,
      50,
    );
    assert.equal(inf.stats.lists, 1, 'a resync does not re-list');
  } finally {
    await inf.stop();
    await cluster.stop();
  }
});

/**
 * A TCP relay to the API that can turn into a black hole: bytes of every connection open at that moment (and of
 * connections opened while it lasts) are dropped silently, without closing anything, like a half-open connection
 * behind a dead NAT or load balancer.
 */
async function blackHoleRelay(
  target: URL,
): Promise<{ url: string; swallow(on: boolean): void; close(): Promise<void> }> {
  let swallowing = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const up = net.connect(Number(target.port), target.hostname);
    let dead = swallowing;
    const kill = () => {
      client.destroy();
      up.destroy();
      sockets.delete(client);
      sockets.delete(up);
    };
    sockets.add(client);
    sockets.add(up);
    const relay = (from: net.Socket, to: net.Socket) => {
      from.on('data', (d: Buffer) => {
        if (swallowing) dead = true;
        if (!dead) to.write(d);
      });
      from.on('error', kill);
      from.on('close', kill);
    };
    relay(client, up);
    relay(up, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    swallow(on: boolean) {
      swallowing = on;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

test('a silent (half-open) watch is detected: health turns bad, the watch is cut and re-opened, and the informer recovers', async () => {
  const cluster = await startTestCluster();
  const relay = await blackHoleRelay(new URL(cluster.authority.url));
  const inf = new Informer<KubeObject>(new KubeClient({ ...cluster.authority.restConfig, server: relay.url }), {
    path: '/api/v1/namespaces/inf-e/configmaps',
    ...FAST,
    watchTimeoutSeconds: 1,
    watchGraceMs: 400,
    listTimeoutMs: 1_000,
    stuckAfterMs: 1_500,
  });
  try {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'inf-e' },
    });
    const adds: string[] = [];
    inf.addHandler({ onAdd: (o) => adds.push(o.metadata!.name!) });
    inf.start();
    assert.equal(await inf.waitForSync(10_000), true);
    await eventually(() => inf.stats.watches >= 1, 'a watch', 5_000, 20);

    relay.swallow(true);
    const bad = await eventually(
      () => {
        const h = inf.health();
        return h.healthy ? undefined : h;
      },
      'the informer to report itself unhealthy',
      10_000,
      50,
    );
    assert.match(bad.reason ?? '', /stuck|no successful list or watch/);
    await eventually(() => inf.stats.stuckWatches >= 1, 'the silent watch to be cut', 10_000, 50);
    assert.ok(inf.stats.failures >= 1, 'counted as a failure, not a success');

    relay.swallow(false);
    await cluster.admin.create('/api/v1/namespaces/inf-e/configmaps', cm('inf-e', 'after-outage'));
    await eventually(() => adds.includes('after-outage'), 'the informer to catch up on fresh connections', 15_000);
    await eventually(() => inf.health().healthy, 'healthy again', 5_000);
  } finally {
    await inf.stop();
    await relay.close();
    await cluster.stop();
  }
});
