/**
 * The manager's lifecycle against the embedded authority: start order, health probes, graceful shutdown order,
 * clear failures (address in use, API unreachable, bad credentials), Lease leader election.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http from 'node:http';
import { Controller, KubeClient, Manager, filters } from '../../packages/ctrlmetrics/src/index.js';
import { ManagerError } from '../../packages/ctrlmetrics/src/exports/manager.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/exports/log.js';
import { LeaderElector } from '../../packages/ctrlmetrics/src/manager/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually, httpsGet, parseExposition, value } from './helpers/exposition.js';
import { scrapeRegistry } from './helpers/scrape.js';

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

/** A port nobody listens on. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function refused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const sock = net.connect(Number(u.port), u.hostname);
    sock.once('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', () => resolve(true));
  });
}

function noopController(name: string, ns: string): Controller {
  return new Controller({
    name,
    reconciler: async () => undefined,
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns }],
  });
}

test('start fails with a clear error when the metrics address is in use, and leaves nothing running', async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as net.AddressInfo).port;
  const healthPort = await freePort();
  try {
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      healthProbeBindAddress: `127.0.0.1:${healthPort}`,
      metrics: { bindAddress: `127.0.0.1:${port}` },
    });
    mgr.add(noopController('bind-fail', 'default'));
    await assert.rejects(mgr.start(), (err: Error) => {
      assert.ok(err instanceof ManagerError);
      assert.match(
        err.message,
        new RegExp(`^failed to start metrics server: .*127\\.0\\.0\\.1:${port}.*already in use`),
      );
      return true;
    });
    assert.equal(await refused(`http://127.0.0.1:${healthPort}`), true, 'the health server was never started');
  } finally {
    blocker.close();
  }
});

test('start fails when the health probe address is in use, and the metrics server started before it is stopped', async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as net.AddressInfo).port;
  const metricsPort = await freePort();
  try {
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      healthProbeBindAddress: `127.0.0.1:${port}`,
      metrics: { bindAddress: `127.0.0.1:${metricsPort}` },
    });
    await assert.rejects(
      mgr.start(),
      /cannot bind the health probe server on 127\.0\.0\.1:\d+: the address is already in use \(EADDRINUSE\)/,
    );
    assert.equal(await refused(`https://127.0.0.1:${metricsPort}`), true, 'metrics server stopped again');
  } finally {
    blocker.close();
  }
});

test('start fails within its bound when the API cannot be reached', async () => {
  const port = await freePort();
  const mgr = new Manager({
    restConfig: { server: `https://127.0.0.1:${port}`, token: 'x', insecureSkipTLSVerify: true },
    handleSignals: false,
    apiCheckTimeoutMs: 3_000,
    metrics: { bindAddress: '127.0.0.1:0' },
  });
  const t0 = Date.now();
  await assert.rejects(mgr.start(), /cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  assert.ok(Date.now() - t0 < 8_000, 'bounded');
});

test('start fails clearly when the API rejects the credentials', async () => {
  const mgr = new Manager({
    restConfig: { ...cluster.authority.restConfig, token: 'not-a-valid-token', cert: undefined, key: undefined },
    handleSignals: false,
    metrics: { bindAddress: '0' },
  });
  await assert.rejects(mgr.start(), /rejected the manager's credentials \(401 Unauthorized\)/);
});

test('aborting start() during the cache sync returns within 1 s, not after the sync timeout', async () => {
  const lines: string[] = [];
  const prevSink = setLogSink((l) => lines.push(l));
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '127.0.0.1:0' },
  });
  // a kind the API does not serve: its cache never syncs (the default sync timeout is 120 s)
  mgr.add(
    new Controller({
      name: 'never-synced',
      reconciler: async () => undefined,
      watches: [{ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' }],
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await eventually(
      () => lines.some((l) => l.includes('Starting Controller')),
      'the controller to wait for its caches',
      10_000,
      20,
    );
    const t0 = performance.now();
    stop.abort();
    await running;
    const ms = performance.now() - t0;
    assert.ok(ms < 1_000, `start() returned ${Math.round(ms)} ms after the abort`);
    await assert.rejects(mgr.ready(), /stopped while starting/);
  } finally {
    stop.abort();
    await running.catch(() => undefined);
    setLogSink(prevSink);
  }
});

test('a watched kind the API does not serve: the log and the start-up error name it and say to install its CRD', async () => {
  const lines: string[] = [];
  const prevSink = setLogSink((l) => lines.push(l));
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    informers: { backoffBaseMs: 20, backoffMaxMs: 50 },
  });
  mgr.add(
    new Controller({
      name: 'missing-crd',
      cacheSyncTimeoutMs: 500,
      reconciler: async () => undefined,
      watches: [{ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', namespace: 'default' }],
    }),
  );
  try {
    await assert.rejects(mgr.start(), (err: Error) => {
      assert.ok(err instanceof ManagerError);
      assert.match(err.message, /^controller missing-crd: timed out after 500 ms waiting for the watch caches to sync/);
      assert.match(
        err.message,
        /: Memcached \(cache\.example\.com\/v1alpha1\): the API server does not serve Memcached \(cache\.example\.com\/v1alpha1\): install the CRD of Memcached before starting the manager \(in a scaffolded project: kubectl apply -k config\/crd\), or correct the watch's apiVersion or kind$/,
      );
      return true;
    });
    assert.ok(
      lines.some(
        (l) => l.includes('watch not started: its kind is not resolved') && l.includes('install the CRD of Memcached'),
      ),
      'the retry log line names the kind and the fix',
    );
  } finally {
    setLogSink(prevSink);
  }
});

test('health probes: /readyz and /healthz pass once running; /healthz fails while a watch cannot make progress', async () => {
  const { startAuthority } = await import('../../packages/envtest/src/index.js');
  const authority = await startAuthority({ listen: '127.0.0.1:0' });
  const mgr = new Manager({
    restConfig: authority.restConfig,
    handleSignals: false,
    healthProbeBindAddress: '127.0.0.1:0',
    metrics: { bindAddress: '0' },
    informers: { stuckAfterMs: 700, backoffBaseMs: 50, backoffMaxMs: 200 },
  });
  mgr.add(noopController('probed', 'default'));
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await Promise.race([mgr.ready(), running]);
    const base = mgr.healthProbeServer!.url;
    assert.deepEqual(await httpGet(`${base}/readyz`), { status: 200, body: 'ok\n' });
    assert.deepEqual(await httpGet(`${base}/healthz`), { status: 200, body: 'ok\n' });
    const verbose = await httpGet(`${base}/readyz?verbose`);
    assert.match(verbose.body, /\[\+\]informers-synced ok/);
    assert.equal((await httpGet(`${base}/nope`)).status, 404);
    await authority.stop();
    const bad = await eventually(
      async () => {
        const r = await httpGet(`${base}/healthz`);
        return r.status === 500 ? r : undefined;
      },
      '/healthz to fail',
      10_000,
    );
    assert.match(
      bad.body,
      /\[-\]informers failed: no successful list or watch of \/api\/v1\/namespaces\/default\/configmaps/,
    );
    assert.equal((await httpGet(`${base}/healthz/ping`)).status, 200, 'single checks can be queried');
  } finally {
    stop.abort();
    await running.catch(() => undefined);
    await authority.stop().catch(() => undefined);
  }
});

test('graceful shutdown: controllers stop first (in-flight reconciles finish), the metrics server last', async () => {
  const ns = 'shutdown-test';
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const reader = await cluster.readerToken();
  const lines: string[] = [];
  const prevSink = setLogSink((l) => lines.push(l));
  let inFlight: () => void = () => undefined;
  const entered = new Promise<void>((r) => (inFlight = r));
  let finished = false;
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    healthProbeBindAddress: '127.0.0.1:0',
    metrics: { bindAddress: '127.0.0.1:0', filterProvider: filters.withAuthenticationAndAuthorization },
  });
  mgr.add(
    new Controller({
      name: 'slow',
      reconciler: async () => {
        inFlight();
        await new Promise((r) => setTimeout(r, 800));
        finished = true;
      },
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'test=slow' }],
    }),
  );
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await Promise.race([mgr.ready(), running]);
    const metricsUrl = `${mgr.metricsServer!.url}/metrics`;
    await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', namespace: ns, labels: { test: 'slow' } },
    });
    await entered;
    stop.abort();
    // the reconcile is still running: the metrics endpoint keeps answering meanwhile
    const during = await httpsGet(metricsUrl, reader);
    assert.equal(during.status, 200);
    assert.equal(value(parseExposition(during.body), 'controller_runtime_active_workers', { controller: 'slow' }), 1);
    assert.equal(finished, false);
    await running;
    assert.equal(finished, true, 'the in-flight reconcile finished before start() resolved');
    assert.equal(await refused(metricsUrl), true, 'metrics server stopped');
    const msgs = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    const order = [
      'metrics server is serving',
      'Starting Controller',
      'Stopping and waiting for controllers',
      'Stopping and waiting for caches',
      'Stopping and waiting for HTTP servers',
      'Wait completed, proceeding to shutdown the manager',
    ];
    const at = order.map((m) => msgs.indexOf(m));
    assert.ok(
      at.every((i) => i >= 0),
      `all lifecycle messages logged: ${JSON.stringify(at)}`,
    );
    assert.deepEqual(
      [...at].sort((a, b) => a - b),
      at,
      `in order: ${order.join(' → ')}`,
    );
    const f = await scrapeRegistry();
    assert.equal(value(f, 'controller_runtime_reconcile_total', { controller: 'slow', result: 'success' }), 1);
  } finally {
    setLogSink(prevSink);
    stop.abort();
    await running.catch(() => undefined);
  }
});

test('leader election: the manager runs controllers only while holding the Lease, is ready while standby, and reports leader_election_master_status', async () => {
  const ns = 'le-test';
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const client = new KubeClient(cluster.authority.restConfig);
  // another replica holds the lease first
  const other = new LeaderElector(client, {
    id: 'demo-lock',
    namespace: ns,
    identity: 'other',
    leaseDurationMs: 1_000,
    retryPeriodMs: 100,
    renewDeadlineMs: 800,
    releaseOnCancel: true,
  });
  const otherStop = new AbortController();
  assert.equal(await other.acquire(otherStop.signal), true);
  const otherRenew = other.renewLoop(otherStop.signal);

  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '127.0.0.1:0',
    leaderElection: true,
    leaderElectionID: 'demo-lock',
    leaderElectionNamespace: ns,
    leaderElectionReleaseOnCancel: true,
    leaseDurationMs: 1_000,
    renewDeadlineMs: 800,
    retryPeriodMs: 100,
  });
  let reconciled = 0;
  mgr.add(
    new Controller({
      name: 'led',
      reconciler: async () => void reconciled++,
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'test=led' }],
    }),
  );
  await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'y', namespace: ns, labels: { test: 'led' } },
  });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(reconciled, 0, 'not the leader yet: no reconciles');
    // a standby replica is ready (else a rolling update would wait forever for the old pod's lease)
    assert.deepEqual(await httpGet(`${mgr.healthProbeServer!.url}/readyz`), { status: 200, body: 'ok\n' });
    let f = await scrapeRegistry();
    assert.equal(value(f, 'leader_election_master_status', { name: 'demo-lock' }), 0);
    // the other replica steps down (releases the lease)
    otherStop.abort();
    await otherRenew;
    await other.release();
    await Promise.race([mgr.ready(), running]);
    await eventually(() => reconciled === 1, 'the controller to run once leading', 10_000);
    f = await scrapeRegistry();
    assert.equal(f.get('leader_election_master_status')?.type, 'gauge');
    assert.equal(value(f, 'leader_election_master_status', { name: 'demo-lock' }), 1);
    const lease = await cluster.admin.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(
      `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/demo-lock`,
    );
    assert.notEqual(lease.spec.holderIdentity, 'other');
    assert.ok(lease.spec.holderIdentity.length > 0);
    assert.equal(lease.spec.leaseTransitions, 1, 'taking over the released lease is a transition');
    stop.abort();
    await running;
    f = await scrapeRegistry();
    // as controller-runtime: only a failed renewal round sets 0; a stop between rounds leaves it as it was
    assert.equal(value(f, 'leader_election_master_status', { name: 'demo-lock' }), 1);
    const released = await cluster.admin.get<{ spec: { holderIdentity?: string } }>(
      `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/demo-lock`,
    );
    assert.equal(released.spec.holderIdentity ?? '', '', 'the lease was released on shutdown');
  } finally {
    otherStop.abort();
    stop.abort();
    await running.catch(() => undefined);
  }
});
