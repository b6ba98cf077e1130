/**
 * `await Manager.create(options)`: a manager usable before start — the client, the REST mapper, the event recorder
 * and the field indexes at set-up — and configuration errors surfacing there, with their cause.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Manager } from '../../packages/ctrlmetrics/src/index.js';
import { ManagerError } from '../../packages/ctrlmetrics/src/exports/manager.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from './helpers/exposition.js';

let cluster: TestCluster;
let dir: string;
before(async () => {
  cluster = await startTestCluster();
  dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-mgr-create-'));
});
after(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a manager made with Manager.create reads, maps kinds and records events before start(); after it, mgr.client reads from the cache and mgr.apiReader past it', async () => {
  const ns = 'mgr-create';
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  // cached reads hand out the cached objects frozen: a frozen answer is one the cache gave
  const mgr = await Manager.create({
    kubeconfig: cluster.kubeconfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    cache: { unsafeDisableDeepCopy: true },
  });
  assert.equal(mgr.restConfig?.server, cluster.url);
  // reads at set-up, through the kubeconfig's credentials
  const got = await mgr.client.get('v1', 'Namespace', { name: ns });
  assert.equal(got.metadata?.name, ns);
  assert.equal(
    (await mgr.pathClient.get<{ metadata: { name: string } }>(`/api/v1/namespaces/${ns}`)).metadata.name,
    ns,
  );
  assert.deepEqual(await mgr.restMapper.mappingFor('apps/v1', 'Deployment'), {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    namespaced: true,
  });
  // an event recorded before start() is written, not dropped
  const cm = await mgr.client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'set-up', namespace: ns },
  });
  assert.equal(Object.isFrozen(cm), false);
  mgr
    .getEventRecorderFor('set-up')
    .event(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: cm.metadata },
      'Normal',
      'Prepared',
      'recorded before start',
    );
  const events = await eventually(
    async () => {
      const list = await cluster.admin.get<{
        items: Array<{ reason: string; message: string; involvedObject: { name: string } }>;
      }>(`/api/v1/namespaces/${ns}/events`);
      return list.items.length > 0 ? list.items : undefined;
    },
    'the event to be written',
    10_000,
  );
  assert.deepEqual(
    events.map((e) => [e.reason, e.message, e.involvedObject.name]),
    [['Prepared', 'recorded before start', 'set-up']],
  );
  // and an events.k8s.io/v1 event (controller-runtime's GetEventRecorder)
  mgr
    .getEventRecorder('set-up-v1')
    .event(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: cm.metadata },
      undefined,
      'Normal',
      'Prepared',
      'Setup',
      'recorded with the events API',
    );
  const v1 = await eventually(
    async () => {
      const list = await cluster.admin.get<{
        items: Array<{ reportingController: string; action: string; note: string; regarding: { name: string } }>;
      }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      const mine = list.items.filter((e) => e.reportingController === 'set-up-v1');
      return mine.length > 0 ? mine : undefined;
    },
    'the events.k8s.io/v1 event to be written',
    10_000,
  );
  assert.deepEqual(
    v1.map((e) => [e.action, e.note, e.regarding.name]),
    [['Setup', 'recorded with the events API', 'set-up']],
  );
  // an index declared at set-up serves the reconciles after start
  mgr.indexField<{ data?: Record<string, string> }>(
    { apiVersion: 'v1', kind: 'ConfigMap' },
    'data.owner',
    (o) => o.data?.owner,
  );
  let matched: string[] | undefined;
  mgr.add(
    new Controller({
      name: 'create-indexed',
      reconciler: async (_req, ctx) => {
        matched = ctx.cache
          .list<{ metadata: { name: string } }>('ConfigMap', { matchingFields: { 'data.owner': 'me' }, namespace: ns })
          .map((o) => o.metadata.name);
      },
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns }],
    }),
  );
  await mgr.client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'mine', namespace: ns },
    data: { owner: 'me' },
  });
  // before start nothing is cached: the read goes to the API server
  assert.equal(Object.isFrozen(await mgr.client.get('v1', 'ConfigMap', { namespace: ns, name: 'mine' })), false);
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    await eventually(() => matched?.length === 1, 'a reconcile to list by the index', 10_000, 20);
    assert.deepEqual(matched, ['mine']);
    // the namespace's ConfigMaps are cached whole now: mgr.client answers from the cache, mgr.apiReader does not
    const cached = await mgr.client.get('v1', 'ConfigMap', { namespace: ns, name: 'mine' });
    assert.equal(Object.isFrozen(cached), true);
    assert.equal(cached.data?.owner, 'me');
    assert.equal(Object.isFrozen(await mgr.apiReader.get('v1', 'ConfigMap', { namespace: ns, name: 'mine' })), false);
    assert.deepEqual(
      (await mgr.client.list('v1', 'ConfigMap', { namespace: ns })).map((o) => o.metadata?.name),
      ['kube-root-ca.crt', 'mine', 'set-up'],
    );
    // a kind nothing watches: its first read starts an informer for it (controller-runtime's cache), then cached
    const sa = await mgr.client.get('v1', 'ServiceAccount', { namespace: ns, name: 'default' });
    assert.equal(Object.isFrozen(sa), true);
    // writes go to the API server
    await mgr.client.delete(cached);
    await assert.rejects(mgr.apiReader.get('v1', 'ConfigMap', { namespace: ns, name: 'mine' }), /not found/);
  } finally {
    stop.abort();
    await running;
  }
});

test("Manager.create rejects a configuration it cannot load, with the loader's error as the cause", async () => {
  const missing = join(dir, 'no-such-kubeconfig');
  await assert.rejects(Manager.create({ kubeconfig: missing, handleSignals: false }), (err: Error) => {
    assert.ok(err instanceof ManagerError);
    assert.match(err.message, /^cannot load the Kubernetes API configuration: /);
    assert.ok(err.message.includes(missing), err.message);
    assert.ok(err.cause instanceof Error);
    return true;
  });
  const broken = join(dir, 'broken-kubeconfig');
  writeFileSync(broken, 'apiVersion: v1\nkind: Config\nclusters: [}\n');
  await assert.rejects(
    Manager.create({ kubeconfig: broken, handleSignals: false }),
    /^ManagerError: cannot load the Kubernetes API configuration: /,
  );
});

test('Manager.create settles the Lease namespace: outside a pod, leader election without a namespace is refused there', async () => {
  await assert.rejects(
    Manager.create({
      kubeconfig: cluster.kubeconfig,
      handleSignals: false,
      leaderElection: true,
      leaderElectionID: 'x',
    }),
    /^ManagerError: unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace/,
  );
  const mgr = await Manager.create({
    kubeconfig: cluster.kubeconfig,
    handleSignals: false,
    leaderElection: true,
    leaderElectionID: 'x',
    leaderElectionNamespace: 'kube-system',
  });
  assert.ok(mgr.client);
});

test('a manager made with new Manager() and no restConfig says how to get a client before start()', () => {
  const mgr = new Manager({ handleSignals: false });
  assert.throws(
    () => mgr.client,
    /^ManagerError: the manager has no API client yet: make it with `await Manager\.create\(options\)` \(or pass restConfig\), or wait for start\(\)$/,
  );
});
