/**
 * The example operator of the writing-an-operator guide (examples/memcached-operator) end to end on a real cluster: its CRD installed
 * and Established, a Memcached reconciled into a finalizer, an owned Deployment (which the cluster's controllers
 * turn into a ReplicaSet), an Available condition and events; a resize; deletion through the finalizer, after which
 * the cluster's garbage collector removes the owned Deployment (the authority, as envtest, runs none); and the
 * controller's metrics served to a metrics-reader token through TokenReview and SubjectAccessReview.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  Manager,
  ObjectClient,
  filters,
  ignoreNotFound,
  isStatusConditionTrue,
  type KubeObject,
} from '../../packages/ctrlmetrics/src/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/exports/log.js';
import { FINALIZER, setupMemcachedController } from '../../examples/memcached-operator/controller.js';
import { MEMCACHED, type Memcached } from '../../examples/memcached-operator/api.js';
import { eventually } from '../controller/helpers/exposition.js';
import { scrape } from '../helpers/secure-endpoint.js';
import { installRunCrd, REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';

const CRDS = join(import.meta.dirname, '../../examples/memcached-operator/config/crd/bases');
const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' };
const NS = runName('real-memcached');

interface Event {
  reason: string;
  type: string;
  message: string;
  source: { component: string };
  involvedObject: { kind: string; name: string };
}

describe('the example Memcached operator on a real cluster', { skip: REAL_KUBE_SKIP, timeout: 180_000 }, () => {
  let kube: RealKube;
  let objects: ObjectClient;
  let mgr: Manager;
  const logs: string[] = [];
  const stopManager = new AbortController();
  let running: Promise<void> | undefined;
  let previousSink: ReturnType<typeof setLogSink> | undefined;
  const memcachedEvents = async () =>
    (await kube.admin.get<{ items: Event[] }>(`/api/v1/namespaces/${NS}/events`)).items.filter(
      (e) => e.involvedObject.kind === 'Memcached',
    );

  before(async () => {
    previousSink = setLogSink((line) => logs.push(line));
    kube = await startRealKube();
    for (const f of readdirSync(CRDS)) {
      await installRunCrd(kube, parseYaml(readFileSync(join(CRDS, f), 'utf8')) as KubeObject);
    }
    await kube.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    objects = new ObjectClient(kube.admin);
    mgr = new Manager({
      restConfig: kube.adminConfig,
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
    await kube?.stop();
    if (previousSink) setLogSink(previousSink);
  });

  test('a Memcached gets a finalizer, an owned Deployment of its size, an Available condition and an event', async () => {
    await objects.create<Memcached>({
      ...MEMCACHED,
      metadata: { name: 'm1', namespace: NS },
      spec: { size: 2, image: 'memcached:1.6.26-alpine3.19' },
    });
    const m = await eventually(async () => {
      const got = await objects.get<Memcached>(MEMCACHED, { namespace: NS, name: 'm1' });
      return isStatusConditionTrue(got.status?.conditions, 'Available') ? got : undefined;
    }, 'the Available condition');
    assert.deepEqual(m.metadata.finalizers, [FINALIZER]);
    const available = m.status!.conditions!.find((c) => c.type === 'Available')!;
    assert.equal(available.message, 'Deployment for custom resource (m1) with 2 replicas created successfully');
    assert.equal(available.observedGeneration, 1);
    const d = await objects.get<KubeObject & { spec: { replicas: number } }>(DEPLOYMENT, { namespace: NS, name: 'm1' });
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
    // the cluster's deployment controller acts on it
    await eventually(
      async () =>
        (await kube.admin.get<{ items: unknown[] }>(`/apis/apps/v1/namespaces/${NS}/replicasets`)).items.length > 0,
      'a ReplicaSet of the Deployment',
    );
    const events = await eventually(async () => {
      const list = await memcachedEvents();
      return list.length ? list : undefined;
    }, 'an event');
    assert.deepEqual(
      events.map((e) => [e.reason, e.message, e.source.component]),
      [['Created', 'Created Deployment m1 with 2 replicas', 'memcached']],
    );
  });

  test('a new size reaches the Deployment', async () => {
    const m = await objects.get<Memcached>(MEMCACHED, { namespace: NS, name: 'm1' });
    await objects.update({ ...m, spec: { ...m.spec, size: 3 } });
    await eventually(
      async () =>
        (await objects.get<KubeObject & { spec: { replicas: number } }>(DEPLOYMENT, { namespace: NS, name: 'm1' })).spec
          .replicas === 3,
      'replicas 3',
    );
  });

  test('deleting the Memcached runs the finalizer; then the garbage collector removes the owned Deployment', async () => {
    const m = await objects.get<Memcached>(MEMCACHED, { namespace: NS, name: 'm1' });
    await objects.delete(m);
    await eventually(
      async () => (await objects.get(MEMCACHED, { namespace: NS, name: 'm1' }).catch(ignoreNotFound)) === undefined,
      'the Memcached to go',
    );
    const events = await memcachedEvents();
    assert.ok(
      events.some(
        (e) =>
          e.type === 'Warning' &&
          e.reason === 'Deleting' &&
          e.message === `Custom Resource m1 is being deleted from the namespace ${NS}`,
      ),
    );
    // the collector learns the new kind at its next discovery sync (every 30 s): up to about 40 s here
    await eventually(
      async () => (await objects.get(DEPLOYMENT, { namespace: NS, name: 'm1' }).catch(ignoreNotFound)) === undefined,
      'the garbage collector to delete the Deployment',
      90_000,
      250,
    );
  });

  test("the controller's metrics are served to a metrics-reader token, and refused without one", async () => {
    const token = await kube.readerToken(NS, 'prometheus');
    const port = mgr.metricsServer!.port;
    const ok = await scrape(port, { token });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^controller_runtime_reconcile_total\{controller="memcached",result="success"\} [1-9]\d*$/m);
    assert.equal((await scrape(port, { token: 'not-a-token' })).status, 401);
    assert.equal((await scrape(port, { token: await kube.serviceAccountToken(NS, 'nobody') })).status, 403);
    assert.ok(
      logs.some((l) => l.includes('"msg":"Starting Controller"') && l.includes('memcached')),
      'the manager logged to the sink',
    );
  });
});
