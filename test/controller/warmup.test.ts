/**
 * Warm replicas (controller-runtime's EnableWarmup) against the embedded authority: a warm standby is not ready until
 * its caches sync, and without leader election warm-up changes nothing. The standby's queueing before it leads is in
 * runnables.suite.ts (also run on a real kube-apiserver).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Controller, KubeClient, Manager } from '../../packages/ctrlmetrics/src/index.js';
import { LeaderElector } from '../../packages/ctrlmetrics/src/manager/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from './helpers/exposition.js';

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(async () => {
  await cluster?.stop();
});

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 5_000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Another replica holding the Lease until `release()`. */
async function holdLease(ns: string, id: string): Promise<{ release: () => Promise<void> }> {
  const other = new LeaderElector(new KubeClient(cluster.authority.restConfig), {
    id,
    namespace: ns,
    identity: 'other',
    leaseDurationMs: 1_000,
    retryPeriodMs: 100,
    renewDeadlineMs: 800,
    releaseOnCancel: true,
  });
  const stop = new AbortController();
  assert.equal(await other.acquire(stop.signal), true);
  const renewing = other.renewLoop(stop.signal);
  return {
    release: async () => {
      stop.abort();
      await renewing;
      await other.release();
    },
  };
}

const leaderOptions = (ns: string, id: string) => ({
  restConfig: cluster.authority.restConfig,
  handleSignals: false,
  metrics: { bindAddress: '0' },
  healthProbeBindAddress: '127.0.0.1:0',
  leaderElection: true,
  leaderElectionID: id,
  leaderElectionNamespace: ns,
  leaderElectionReleaseOnCancel: true,
  leaseDurationMs: 1_000,
  renewDeadlineMs: 800,
  retryPeriodMs: 100,
});

test('a warm standby is not ready until its warm caches sync; a sync that times out stops the manager', async () => {
  const ns = 'warmup-unsynced';
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const other = await holdLease(ns, 'warmup-unsynced-lock');
  const mgr = new Manager({
    ...leaderOptions(ns, 'warmup-unsynced-lock'),
    enableWarmup: true,
    informers: { backoffBaseMs: 20, backoffMaxMs: 50 },
  });
  // a kind the API does not serve: its cache cannot sync
  mgr.add(
    new Controller({
      name: 'warm-unserved',
      cacheSyncTimeoutMs: 3_000,
      reconciler: async () => undefined,
      watches: [{ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', namespace: ns }],
    }),
  );
  const running = mgr.start();
  try {
    // not ready from the start; the reason names the kind once discovery has answered (before: "not answered yet")
    let sawReady = false;
    const notReady = await eventually(
      async () => {
        const r = await httpGet(`${mgr.healthProbeServer!.url}/readyz?verbose`).catch(() => undefined);
        if (r?.status === 200) sawReady = true;
        return r?.status === 500 && /does not serve/.test(r.body) ? r : undefined;
      },
      "the standby's /readyz to name the unserved kind",
      2_500,
      20,
    );
    assert.equal(sawReady, false, 'the standby is never ready');
    assert.match(
      notReady.body,
      /\[-\]informers-synced failed: caches not synced: Memcached \(cache\.example\.com\/v1alpha1\) \(the API server does not serve Memcached/,
    );
    await assert.rejects(
      running,
      /^ManagerError: controller warm-unserved: timed out after 3000 ms waiting for the watch caches to sync/,
    );
  } finally {
    await running.catch(() => undefined);
    await other.release();
  }
});

test('without leader election, enableWarmup changes nothing: controllers start as usual', async () => {
  const ns = 'warmup-no-le';
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'only', namespace: ns, labels: { test: 'no-le' } },
  });
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    enableWarmup: true,
  });
  let reconciled = 0;
  mgr.add(
    new Controller({
      name: 'no-le-warm',
      reconciler: async () => void reconciled++,
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'test=no-le' }],
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await mgr.ready();
    await eventually(() => reconciled === 1, 'the reconcile', 10_000, 20);
  } finally {
    stop.abort();
    await running;
  }
});
