/**
 * Runnables in the manager, against the embedded authority: which wait for the Lease and which run on every
 * replica, a failing runnable stopping the manager with its error as the cause, the stop order (metrics last),
 * runnables added after start, and the graceful shutdown budget.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, KubeClient, Manager, ManagerError, type Runnable } from '../../src/index.js';
import { LeaderElector } from '../../src/manager/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually, httpsGet } from './helpers/exposition.js';

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(async () => {
  await cluster?.stop();
});

/** A runnable that records its start and stop, and runs until its signal aborts. */
function recording(name: string, log: string[], opts: { needLeaderElection?: boolean; onStop?: () => Promise<void> } = {}): Runnable & { running: boolean } {
  const r = {
    name,
    needLeaderElection: opts.needLeaderElection,
    running: false,
    async start(signal: AbortSignal) {
      r.running = true;
      log.push(`${name} started`);
      await new Promise<void>((res) => signal.addEventListener('abort', () => res(), { once: true }));
      log.push(`${name} stopping`);
      await opts.onStop?.();
      r.running = false;
      log.push(`${name} stopped`);
    },
  };
  return r;
}

async function namespace(name: string): Promise<void> {
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

test('on a standby, runnables and controllers with needLeaderElection: false run; the others wait for the Lease', async () => {
  const ns = 'runnables-standby';
  await namespace(ns);
  const client = new KubeClient(cluster.authority.restConfig);
  const other = new LeaderElector(client, { id: 'runnables-lock', namespace: ns, identity: 'other', leaseDurationMs: 1_000, retryPeriodMs: 100, renewDeadlineMs: 800, releaseOnCancel: true });
  const otherStop = new AbortController();
  assert.equal(await other.acquire(otherStop.signal), true);
  const otherRenew = other.renewLoop(otherStop.signal);
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    leaderElection: true,
    leaderElectionID: 'runnables-lock',
    leaderElectionNamespace: ns,
    leaderElectionReleaseOnCancel: true,
    leaseDurationMs: 1_000,
    renewDeadlineMs: 800,
    retryPeriodMs: 100,
  });
  const log: string[] = [];
  const everywhere = recording('everywhere', log, { needLeaderElection: false });
  const leaderOnly = recording('leader-only', log);
  const reconciled = { everyReplica: 0, leader: 0 };
  const watch = (label: string) => [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: `test=${label}` }];
  mgr.add(everywhere).add(leaderOnly);
  mgr.add(new Controller({ name: 'every-replica', needLeaderElection: false, reconciler: async () => void reconciled.everyReplica++, watches: watch('runnables') }));
  mgr.add(new Controller({ name: 'leader-controller', reconciler: async () => void reconciled.leader++, watches: watch('runnables') }));
  await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: ns, labels: { test: 'runnables' } } });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await eventually(() => reconciled.everyReplica === 1, 'the every-replica controller to reconcile on the standby', 10_000, 20);
    assert.equal(everywhere.running, true);
    // the standby keeps trying for the Lease (retry period 100 ms): several rounds, and still nothing that needs it ran
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(leaderOnly.running, false, 'a runnable that needs the Lease waits for it');
    assert.equal(reconciled.leader, 0, 'a controller that needs the Lease waits for it');
    // added on the standby: one that needs no Lease starts at once, one that needs it waits with the others
    const late = recording('late-everywhere', log, { needLeaderElection: false });
    const lateLeader = recording('late-leader', log);
    mgr.add(late).add(lateLeader);
    await eventually(() => late.running, 'a runnable added after start to start at once', 5_000, 10);
    assert.equal(lateLeader.running, false);
    otherStop.abort();
    await otherRenew;
    await other.release();
    await mgr.ready();
    await eventually(() => reconciled.leader === 1 && leaderOnly.running && lateLeader.running, 'the leader runnables to start once leading', 10_000, 20);
    assert.equal(reconciled.everyReplica, 1, 'no second reconcile of the every-replica controller on becoming leader');
  } finally {
    otherStop.abort();
    stop.abort();
    await running;
  }
  assert.deepEqual(
    [everywhere.running, leaderOnly.running, log.indexOf('everywhere stopping') < log.indexOf('leader-only stopping')],
    [false, false, true],
    'every-replica runnables stop before the leader\'s (controller-runtime\'s order)',
  );
});

test('a runnable that fails stops the manager: start() rejects with its error as the cause, everything else is stopped', async () => {
  const mgr = new Manager({ restConfig: cluster.authority.restConfig, handleSignals: false, metrics: { bindAddress: '127.0.0.1:0' } });
  const log: string[] = [];
  const bystander = recording('bystander', log, { needLeaderElection: false });
  const boom = new TypeError('queue consumer lost its connection');
  let fire!: () => void;
  const fired = new Promise<void>((r) => (fire = r));
  mgr.add(bystander);
  mgr.add({
    name: 'consumer',
    async start() {
      await fired;
      throw boom;
    },
  });
  const running = mgr.start();
  await mgr.ready();
  const metricsUrl = `${mgr.metricsServer!.url}/metrics`;
  fire();
  await assert.rejects(running, (err: Error) => {
    assert.ok(err instanceof ManagerError);
    assert.equal(err.message, 'consumer failed: queue consumer lost its connection');
    assert.equal(err.cause, boom);
    return true;
  });
  assert.equal(bystander.running, false, 'the other runnables were stopped');
  assert.deepEqual(log, ['bystander started', 'bystander stopping', 'bystander stopped']);
  await assert.rejects(httpsGet(metricsUrl, undefined, 2_000), /ECONNREFUSED/, 'the metrics server was stopped');
});

test('a runnable that fails at once fails start(); ready() rejects; a thrown non-Error is wrapped', async () => {
  const mgr = new Manager({ restConfig: cluster.authority.restConfig, handleSignals: false, metrics: { bindAddress: '0' } });
  mgr.add({
    needLeaderElection: false,
    start() {
      throw 'no config file';
    },
  });
  await assert.rejects(mgr.start(), (err: Error) => {
    assert.ok(err instanceof ManagerError);
    assert.equal(err.message, 'runnable failed: no config file');
    assert.ok(err.cause instanceof Error);
    return true;
  });
  await assert.rejects(mgr.ready());
});

test('stop order: every-replica runnables, then the leader\'s, then the HTTP servers: metrics still answer while runnables drain', async () => {
  const reader = await cluster.readerToken();
  const mgr = new Manager({ restConfig: cluster.authority.restConfig, handleSignals: false, metrics: { bindAddress: '127.0.0.1:0' }, healthProbeBindAddress: '127.0.0.1:0' });
  const log: string[] = [];
  const scraped: number[] = [];
  const scrape = async () => void scraped.push((await httpsGet(`${mgr.metricsServer!.url}/metrics`, reader)).status);
  mgr.add(recording('worker', log, { needLeaderElection: false, onStop: scrape }));
  mgr.add(recording('leader', log, { onStop: scrape }));
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  await mgr.ready();
  stop.abort();
  await running;
  assert.deepEqual(log, ['worker started', 'leader started', 'worker stopping', 'worker stopped', 'leader stopping', 'leader stopped']);
  assert.deepEqual(scraped, [200, 200], 'the metrics server serves until the runnables have stopped');
  assert.throws(() => mgr.add(recording('too-late', log)), (err: Error) => err instanceof ManagerError && /cannot add too-late: the manager is stopping/.test(err.message));
});

test('a runnable that ignores its signal: stop waits for gracefulShutdownTimeoutMs, then start() rejects saying so', async () => {
  const mgr = new Manager({ restConfig: cluster.authority.restConfig, handleSignals: false, metrics: { bindAddress: '0' }, gracefulShutdownTimeoutMs: 300 });
  mgr.add({ name: 'stubborn', start: () => new Promise<void>(() => undefined) });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  await mgr.ready();
  const t0 = performance.now();
  stop.abort();
  await assert.rejects(running, /^ManagerError: failed waiting for all runnables to end within grace period of 300 ms$/);
  const ms = performance.now() - t0;
  assert.ok(ms >= 250 && ms < 3_000, `stopped after ${Math.round(ms)} ms`);
});

test('add() refuses what is not a runnable, with what it takes', () => {
  const mgr = new Manager({ restConfig: cluster.authority.restConfig, handleSignals: false });
  assert.throws(() => mgr.add({ run() {} } as unknown as Runnable), /^ManagerError: add\(\) takes a Controller, a Webhook, a ConversionWebhook or a Runnable \(an object with start\(signal\)\)$/);
});
