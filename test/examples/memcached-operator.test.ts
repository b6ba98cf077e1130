// The "Writing an operator" guide's example (docs/guides/writing-an-operator.md shows this file and the
// controller; test/docs/code-blocks.test.ts checks they are the same), run as written there: the Memcached operator of
// examples/memcached-operator on the embedded authority — finalizer, status conditions, an owned Deployment,
// events — and its metrics scraped through the secure endpoint with a metrics-reader token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { join } from 'node:path';
import {
  KubeClient,
  Manager,
  ObjectClient,
  filters,
  ignoreNotFound,
  isStatusConditionTrue,
  type KubeObject,
} from '../../packages/ctrlmetrics/src/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/exports/log.js';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { FINALIZER, setupMemcachedController } from '../../examples/memcached-operator/controller.js';
import { MEMCACHED, type Memcached } from '../../examples/memcached-operator/api.js';

const CRDS = join(import.meta.dirname, '../../examples/memcached-operator/config/crd/bases'); // in your project: 'config/crd/bases'
const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' };

let authority: Authority;
let client: KubeClient;
let objects: ObjectClient;
let mgr: Manager;
const logs: string[] = [];
const stopManager = new AbortController();
let running: Promise<void>;

/** Polls `probe` every 50 ms until it answers something other than undefined (bounded: 10 s). */
async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A token of a service account allowed to `get /metrics`, as Prometheus has in a cluster. */
async function metricsReaderToken(): Promise<string> {
  await client.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'metrics-reader' },
    rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
  });
  await client.create('/api/v1/namespaces/default/serviceaccounts', {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'prometheus' },
  });
  await client.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'prometheus-metrics-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'default' }],
  });
  const tr = await client.create<{ status: { token: string } }>(
    '/api/v1/namespaces/default/serviceaccounts/prometheus/token',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
  );
  return tr.status.token;
}

/** GET of the manager's /metrics with a bearer token (the manager's certificate is self-signed here). */
function scrape(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/metrics`,
      { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 10_000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  setLogSink((line) => logs.push(line)); // the manager's JSON log lines, kept out of the test runner's output
  authority = await startAuthority({ apply: [CRDS] });
  client = new KubeClient(authority.restConfig); // the admin identity (group system:masters)
  objects = new ObjectClient(client);
  mgr = new Manager({
    restConfig: authority.restConfig,
    handleSignals: false,
    healthProbeBindAddress: '0',
    metrics: { bindAddress: '127.0.0.1:0', filterProvider: filters.withAuthenticationAndAuthorization },
  });
  setupMemcachedController(mgr);
  running = mgr.start(stopManager.signal);
  await mgr.ready();
});

after(async () => {
  stopManager.abort();
  await running;
  client.close();
  await authority.stop();
});

test('a Memcached gets a finalizer, an owned Deployment of its size, an Available condition and an event', async () => {
  await objects.create<Memcached>({
    ...MEMCACHED,
    metadata: { name: 'm1', namespace: 'default' },
    spec: { size: 2, image: 'memcached:1.6.26-alpine3.19' },
  });
  const m = await eventually(async () => {
    const got = await objects.get<Memcached>(MEMCACHED, { namespace: 'default', name: 'm1' });
    return isStatusConditionTrue(got.status?.conditions, 'Available') ? got : undefined;
  }, 'the Available condition');
  assert.deepEqual(m.metadata.finalizers, [FINALIZER]);
  const available = m.status!.conditions!.find((c) => c.type === 'Available')!;
  assert.equal(available.message, 'Deployment for custom resource (m1) with 2 replicas created successfully');
  assert.equal(available.observedGeneration, 1);

  const d = await objects.get<KubeObject & { spec: { replicas: number } }>(DEPLOYMENT, {
    namespace: 'default',
    name: 'm1',
  });
  assert.equal(d.spec.replicas, 2);
  assert.deepEqual(d.metadata?.ownerReferences, [
    {
      apiVersion: MEMCACHED.apiVersion,
      kind: 'Memcached',
      name: 'm1',
      uid: m.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ]);

  const events = await eventually(async () => {
    const list = await client.get<{ items: Array<{ reason: string; message: string; source: { component: string } }> }>(
      '/api/v1/namespaces/default/events',
    );
    return list.items.length ? list.items : undefined;
  }, 'an event');
  assert.deepEqual(
    events.map((e) => [e.reason, e.message, e.source.component]),
    [['Created', 'Created Deployment m1 with 2 replicas', 'memcached']],
  );
});

test('a new size reaches the Deployment', async () => {
  const m = await objects.get<Memcached>(MEMCACHED, { namespace: 'default', name: 'm1' });
  await objects.update({ ...m, spec: { ...m.spec, size: 3 } });
  await eventually(async () => {
    const d = await objects.get<KubeObject & { spec: { replicas: number } }>(DEPLOYMENT, {
      namespace: 'default',
      name: 'm1',
    });
    return d.spec.replicas === 3 ? d : undefined;
  }, 'replicas 3');
});

test('another Deployment the Memcached controls is found through the owner index and deleted', async () => {
  const m = await objects.get<Memcached>(MEMCACHED, { namespace: 'default', name: 'm1' });
  const ref = {
    apiVersion: MEMCACHED.apiVersion,
    kind: 'Memcached',
    name: 'm1',
    uid: m.metadata.uid!,
    controller: true,
  };
  const template = {
    metadata: { labels: { app: 'stray' } },
    spec: { containers: [{ name: 'c', image: 'memcached:1.6.26-alpine3.19' }] },
  };
  await objects.create({
    ...DEPLOYMENT,
    metadata: { name: 'm1-old', namespace: 'default', ownerReferences: [ref] },
    spec: { selector: { matchLabels: { app: 'stray' } }, template },
  });
  await eventually(
    async () =>
      (await objects.get(DEPLOYMENT, { namespace: 'default', name: 'm1-old' }).catch(ignoreNotFound)) === undefined
        ? true
        : undefined,
    'the stray Deployment deleted',
  );
  assert.ok(await objects.get(DEPLOYMENT, { namespace: 'default', name: 'm1' }), 'the one named after it stays');
});

test('deleting the Memcached runs the finalizer: an event, then the object is gone (owned objects stay: no garbage collector)', async () => {
  const m = await objects.get<Memcached>(MEMCACHED, { namespace: 'default', name: 'm1' });
  await objects.delete(m);
  await eventually(
    async () =>
      (await objects.get(MEMCACHED, { namespace: 'default', name: 'm1' }).catch(ignoreNotFound)) === undefined
        ? true
        : undefined,
    'the Memcached to go',
  );
  const events = await client.get<{ items: Array<{ reason: string; type: string; message: string }> }>(
    '/api/v1/namespaces/default/events',
  );
  assert.ok(
    events.items.some(
      (e) =>
        e.type === 'Warning' &&
        e.reason === 'Deleting' &&
        e.message === 'Custom Resource m1 is being deleted from the namespace default',
    ),
  );
  // a cluster's garbage collector would delete the Deployment now; the authority (as envtest) runs none
  assert.ok(await objects.get(DEPLOYMENT, { namespace: 'default', name: 'm1' }));
});

test("the controller's metrics are served to a metrics-reader token, and refused without one", async () => {
  const token = await metricsReaderToken();
  const ok = await scrape(mgr.metricsServer!.url, token);
  assert.equal(ok.status, 200);
  assert.match(ok.body, /^controller_runtime_reconcile_total\{controller="memcached",result="success"\} [1-9]\d*$/m);
  assert.equal((await scrape(mgr.metricsServer!.url, 'not-a-token')).status, 401);
  assert.ok(
    logs.some((l) => l.includes('"msg":"Starting Controller"') && l.includes('memcached')),
    'the manager logged to the sink',
  );
});
