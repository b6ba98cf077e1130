/**
 * Delays of any length (src/util/timers.ts) and the work queue's addAfter on them, with a clock whose timers
 * behave as Node's do: a delay above 2^31−1 ms fires after 1 ms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { after, MAX_TIMER_MS, type TimerClock } from '../../src/util/timers.js';
import { Workqueue } from '../../src/controller/workqueue.js';

const DAY = 24 * 3600_000;

/** Manual time; timers fire only when advanced, and like Node's, any delay above 2^31−1 ms becomes 1 ms. */
class NodeLikeClock implements TimerClock {
  private t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + (ms > MAX_TIMER_MS ? 1 : Math.max(1, ms)), fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const next = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = end;
  }
}

test('the clock model: a plain timer of 30 days fires after 1 ms, as Node\'s does', () => {
  const clock = new NodeLikeClock();
  let fired = false;
  clock.setTimeout(() => (fired = true), 30 * DAY);
  clock.advance(1);
  assert.equal(fired, true);
});

test('after(30 days) fires exactly when 30 days have passed, not before', () => {
  const clock = new NodeLikeClock();
  let firedAt = -1;
  after(30 * DAY, () => (firedAt = clock.now()), clock);
  clock.advance(1);
  assert.equal(firedAt, -1);
  clock.advance(25 * DAY);
  assert.equal(firedAt, -1);
  clock.advance(5 * DAY - 2);
  assert.equal(firedAt, -1);
  clock.advance(1);
  assert.equal(firedAt, 30 * DAY);
});

test('after() can be cancelled before and after re-arming', () => {
  const clock = new NodeLikeClock();
  let fired = 0;
  const c1 = after(30 * DAY, () => fired++, clock);
  clock.advance(26 * DAY);
  c1();
  const c2 = after(10, () => fired++, clock);
  c2();
  clock.advance(10 * DAY);
  assert.equal(fired, 0);
});

test('after(0) runs on a later turn, never synchronously', async () => {
  let fired = false;
  after(0, () => (fired = true));
  assert.equal(fired, false);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(fired, true);
});

test('a 30-day addAfter (a reconciler\'s requeueAfterMs) does not run early', () => {
  const clock = new NodeLikeClock();
  const q = new Workqueue<string>({ name: 'timers_test', metrics: false, clock });
  q.addAfter('x', 30 * DAY);
  q.addAfter('y', 100);
  clock.advance(100);
  assert.equal(q.len(), 1, 'the short one is queued');
  clock.advance(1);
  assert.equal(q.len(), 1, 'the 30-day one is not');
  clock.advance(30 * DAY - 102);
  assert.equal(q.len(), 1);
  assert.equal(q.waitingLen(), 1);
  clock.advance(1);
  assert.equal(q.len(), 2, 'queued after exactly 30 days');
  q.shutDown();
});

test('with Node\'s own timers, a 30-day after() has not fired 50 ms later', async () => {
  let fired = false;
  const cancel = after(30 * DAY, () => (fired = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fired, false);
  cancel();
});

test('an API call with a 30-day timeout is not cut after 1 ms (the socket timeout and the deadline are clamped)', async () => {
  const { startTestCluster } = await import('../helpers/cluster.js');
  const { KubeClient } = await import('../../src/kube/client.js');
  const cluster = await startTestCluster();
  const client = new KubeClient(cluster.authority.restConfig);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const v = await client.get<{ major: string }>('/version', { timeoutMs: 30 * DAY });
    assert.equal(typeof v.major, 'string');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  } finally {
    process.off('warning', onWarning);
    client.close();
    await cluster.stop();
  }
});
