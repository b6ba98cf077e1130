/**
 * Runnables in the manager, against the embedded authority: which wait for the Lease and which run on every
 * replica, a failing runnable stopping the manager with its error as the cause, the stop order (metrics last),
 * runnables added after start, and the graceful shutdown budget.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import { ManagerError, type Runnable } from '../../packages/ctrlmetrics/src/exports/manager.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { httpsGet } from './helpers/exposition.js';
import { recording, runnablesSuite } from './runnables.suite.js';

let cluster: TestCluster;
before(async () => {
  cluster = await startTestCluster();
});
after(async () => {
  await cluster?.stop();
});

// the Lease cases (a standby's runnables and controllers, warm replicas), shared with test/real-api/runnables.test.ts
runnablesSuite(
  'runnables and warm replicas with a Lease on the authority',
  async () => {
    const c = await startTestCluster();
    return { restConfig: c.authority.restConfig, admin: c.admin, stop: () => c.stop() };
  },
  'rn',
);

test('a runnable that fails stops the manager: start() rejects with its error as the cause, everything else is stopped', async () => {
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '127.0.0.1:0' },
  });
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
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
  });
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

test("stop order: every-replica runnables, then the leader's, then the HTTP servers: metrics still answer while runnables drain", async () => {
  const reader = await cluster.readerToken();
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '127.0.0.1:0' },
    healthProbeBindAddress: '127.0.0.1:0',
  });
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
  assert.deepEqual(log, [
    'worker started',
    'leader started',
    'worker stopping',
    'worker stopped',
    'leader stopping',
    'leader stopped',
  ]);
  assert.deepEqual(scraped, [200, 200], 'the metrics server serves until the runnables have stopped');
  assert.throws(
    () => mgr.add(recording('too-late', log)),
    (err: Error) => err instanceof ManagerError && /cannot add too-late: the manager is stopping/.test(err.message),
  );
});

test('a runnable that ignores its signal: stop waits for gracefulShutdownTimeoutMs, then start() rejects saying so', async () => {
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    gracefulShutdownTimeoutMs: 300,
  });
  mgr.add({ name: 'stubborn', start: () => new Promise<void>(() => undefined) });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  await mgr.ready();
  const t0 = performance.now();
  stop.abort();
  await assert.rejects(
    running,
    /^ManagerError: failed waiting for all runnables to end within grace period of 300 ms$/,
  );
  const ms = performance.now() - t0;
  assert.ok(ms >= 250 && ms < 3_000, `stopped after ${Math.round(ms)} ms`);
});

test('add() refuses what is not a runnable, with what it takes', () => {
  const mgr = new Manager({ restConfig: cluster.authority.restConfig, handleSignals: false });
  assert.throws(
    () => mgr.add({ run() {} } as unknown as Runnable),
    /^ManagerError: add\(\) takes a Controller, a Webhook, a ConversionWebhook or a Runnable \(an object with start\(signal\)\)$/,
  );
});
