/**
 * Delays of any length (src/util/timers.ts) and the work queue's addAfter on them, with a clock whose timers
 * behave as Node's do: a delay above 2^31−1 ms fires after 1 ms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { after } from '../../packages/ctrlmetrics/src/util/timers.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Workqueue } from '../../packages/ctrlmetrics/src/controller/workqueue.js';

const DAY = 24 * 3600_000;

test("the clock model: a plain timer of 30 days fires after 1 ms, as Node's does", async () => {
  const clock = new ManualClock();
  let fired = false;
  clock.setTimeout(() => (fired = true), 30 * DAY);
  await clock.advance(1);
  assert.equal(fired, true);
});

test('after(30 days) fires exactly when 30 days have passed, not before', async () => {
  const clock = new ManualClock();
  let firedAt = -1;
  after(30 * DAY, () => (firedAt = clock.now()), clock);
  await clock.advance(1);
  assert.equal(firedAt, -1);
  await clock.advance(25 * DAY);
  assert.equal(firedAt, -1);
  await clock.advance(5 * DAY - 2);
  assert.equal(firedAt, -1);
  await clock.advance(1);
  assert.equal(firedAt, 30 * DAY);
});

test('after() can be cancelled before and after re-arming', async () => {
  const clock = new ManualClock();
  let fired = 0;
  const c1 = after(30 * DAY, () => fired++, clock);
  await clock.advance(26 * DAY);
  c1();
  const c2 = after(10, () => fired++, clock);
  c2();
  await clock.advance(10 * DAY);
  assert.equal(fired, 0);
});

test('after(0) runs on a later turn, never synchronously', async () => {
  let fired = false;
  after(0, () => (fired = true));
  assert.equal(fired, false);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(fired, true);
});

test("a 30-day addAfter (a reconciler's requeueAfterMs) does not run early", async () => {
  const clock = new ManualClock();
  const q = new Workqueue<string>({ name: 'timers_test', metrics: false, clock });
  q.addAfter('x', 30 * DAY);
  q.addAfter('y', 100);
  await clock.advance(100);
  assert.equal(q.len(), 1, 'the short one is queued');
  await clock.advance(1);
  assert.equal(q.len(), 1, 'the 30-day one is not');
  await clock.advance(30 * DAY - 102);
  assert.equal(q.len(), 1);
  assert.equal(q.waitingLen(), 1);
  await clock.advance(1);
  assert.equal(q.len(), 2, 'queued after exactly 30 days');
  q.shutDown();
});

test("with Node's own timers, a 30-day after() has not fired 50 ms later", async () => {
  let fired = false;
  const cancel = after(30 * DAY, () => (fired = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fired, false);
  cancel();
});

test('an API call with a 30-day timeout is not cut after 1 ms (the socket timeout and the deadline are clamped)', async () => {
  const { startTestCluster } = await import('../helpers/cluster.js');
  const { KubeClient } = await import('../../packages/ctrlmetrics/src/kube/client.js');
  const cluster = await startTestCluster();
  const client = new KubeClient(cluster.authority.restConfig);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const v = await client.get<{ major: string }>('/version', { timeoutMs: 30 * DAY });
    assert.equal(typeof v.major, 'string');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      warnings.filter((w) => w === 'TimeoutOverflowWarning'),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    client.close();
    await cluster.stop();
  }
});
