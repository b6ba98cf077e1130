/**
 * controller-runtime v0.24's priority queue (the controller's default queue), with an injected clock: order by
 * priority then readiness, de-duplication (higher priority and earlier ready time win), the lock while an item is
 * processed, metrics that count an item when it becomes ready, retries for every delayed add, and a shutdown that
 * drops what is queued. Metrics are read from the rendered registry with the independent parser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PriorityQueue, LOW_PRIORITY } from '../../packages/ctrlmetrics/src/controller/priorityqueue.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { scrapeRegistry } from './helpers/scrape.js';
import { value } from './helpers/exposition.js';

async function metric(name: string, queue: string, extra: Record<string, string> = {}): Promise<number | undefined> {
  return value(await scrapeRegistry(), name, { name: queue, controller: queue, ...extra });
}

/** Drains what is ready now, in the order get() hands it out (each item marked done at once). */
async function drain<T>(q: PriorityQueue<T>): Promise<Array<[T, number]>> {
  const out: Array<[T, number]> = [];
  while (q.len() > 0) {
    const g = await q.get();
    if (g.shutdown) break;
    out.push([g.item, g.priority]);
    q.done(g.item);
  }
  return out;
}

test('items come out by priority, highest first, then in the order they became ready', async () => {
  const q = new PriorityQueue<string>({ name: 'pq_order', clock: new ManualClock() });
  q.add('a');
  q.add('b', LOW_PRIORITY);
  q.add('c');
  q.add('d', 10);
  assert.deepEqual(await drain(q), [
    ['d', 10],
    ['a', 0],
    ['c', 0],
    ['b', -100],
  ]);
});

test('a re-add keeps the higher priority; raising it moves the item to the end of that line; a lower one is ignored', async () => {
  const q = new PriorityQueue<string>({ name: 'pq_dedup', clock: new ManualClock() });
  q.add('x', LOW_PRIORITY);
  q.add('y');
  q.add('z', 5);
  q.add('x'); // raised to 0: after y
  q.add('z', LOW_PRIORITY); // lower: ignored
  q.add('y'); // the same: nothing moves
  assert.equal(q.len(), 3);
  assert.deepEqual(await drain(q), [
    ['z', 5],
    ['y', 0],
    ['x', 0],
  ]);
  assert.equal(await metric('workqueue_adds_total', 'pq_dedup'), 3, 'an item is added once however often it is queued');
});

test('a delayed item is not in the depth until it is ready; every delayed add is a retry; the earlier time wins; a plain add makes it ready', async () => {
  const clock = new ManualClock();
  const q = new PriorityQueue<string>({ name: 'pq_delay', clock });
  q.addAfter('a', 1000);
  q.addAfter('a', 500); // earlier: wins
  q.addAfter('a', 2000); // later: ignored, still a retry
  assert.equal(q.len(), 0);
  assert.equal(q.waitingLen(), 1);
  assert.equal(await metric('workqueue_retries_total', 'pq_delay'), 3);
  assert.equal(await metric('workqueue_adds_total', 'pq_delay'), 0);
  assert.equal(
    await metric('workqueue_depth', 'pq_delay', { priority: '0' }),
    undefined,
    'no depth series before anything is ready',
  );
  await clock.advance(499);
  assert.equal(q.len(), 0);
  await clock.advance(1);
  assert.equal(q.len(), 1);
  assert.equal(await metric('workqueue_adds_total', 'pq_delay'), 1);
  assert.equal(await metric('workqueue_depth', 'pq_delay', { priority: '0' }), 1);

  q.addAfter('b', 10_000, LOW_PRIORITY);
  q.add('b', LOW_PRIORITY); // a plain add of a delayed item: ready at once
  assert.equal(q.len(), 2);
  assert.equal(await metric('workqueue_depth', 'pq_delay', { priority: '-100' }), 1);
  await clock.advance(20_000);
  assert.deepEqual(await drain(q), [
    ['a', 0],
    ['b', -100],
  ]);
  assert.equal(await metric('workqueue_depth', 'pq_delay', { priority: '0' }), 0);
  assert.equal(await metric('workqueue_depth', 'pq_delay', { priority: '-100' }), 0);
  assert.equal(await metric('workqueue_adds_total', 'pq_delay'), 2, 'the timer of b found it already handed out');
});

test('an item handed out is locked until done: a re-add waits, ready, and is handed out after done', async () => {
  const q = new PriorityQueue<string>({ name: 'pq_lock', clock: new ManualClock() });
  q.add('a');
  const first = await q.get();
  assert.equal(first.item, 'a');
  q.add('a');
  assert.equal(q.len(), 1, 'ready again');
  let second: string | undefined;
  const pending = q.get().then((g) => (second = g.item));
  await new Promise((r) => setImmediate(r));
  assert.equal(second, undefined, 'not handed to a second worker while locked');
  q.done('a');
  await pending;
  assert.equal(second, 'a');
  assert.equal(await metric('workqueue_adds_total', 'pq_lock'), 2);
});

test('addRateLimited: per-item exponential backoff only (5 ms·2ⁿ), no overall bucket; forget resets it', async () => {
  const clock = new ManualClock();
  const q = new PriorityQueue<string>({ name: 'pq_rate', clock });
  // 200 items at once: no token bucket holds any of them past their 5 ms
  for (let i = 0; i < 200; i++) q.addRateLimited(`i${i}`);
  await clock.advance(5);
  assert.equal(q.len(), 200);
  await drain(q);
  q.addRateLimited('a');
  q.addRateLimited('a');
  q.addRateLimited('a'); // when() is called each time: 5, 10, 20 ms; the earliest (5) wins
  assert.equal(q.numRequeues('a'), 3);
  await clock.advance(5);
  assert.equal(q.len(), 1);
  await drain(q);
  q.addRateLimited('a'); // the 4th failure: 40 ms
  await clock.advance(39);
  assert.equal(q.len(), 0);
  await clock.advance(1);
  assert.equal(q.len(), 1);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
});

test('shutdown drops what is queued and delayed: get answers shutdown at once, later adds are ignored, the depth is 0', async () => {
  const clock = new ManualClock();
  const q = new PriorityQueue<string>({ name: 'pq_stop', clock });
  q.add('a');
  q.add('b', LOW_PRIORITY);
  q.addAfter('c', 100);
  const waiting = new PriorityQueue<string>({ name: 'pq_stop_wait', clock });
  const idle = waiting.get();
  q.shutDown();
  waiting.shutDown();
  assert.equal((await q.get()).shutdown, true);
  assert.equal((await idle).shutdown, true, 'a waiting worker is woken');
  q.add('d');
  await clock.advance(1000);
  assert.equal(q.len(), 0);
  assert.equal(await metric('workqueue_depth', 'pq_stop', { priority: '0' }), 0);
  assert.equal(await metric('workqueue_depth', 'pq_stop', { priority: '-100' }), 0);
});

test('more than 25 distinct priorities are reported as exceeded_cardinality_limit', async () => {
  const q = new PriorityQueue<string>({ name: 'pq_card', clock: new ManualClock() });
  for (let p = 0; p < 30; p++) q.add(`i${p}`, p);
  const fams = await scrapeRegistry();
  const depth = fams.get('workqueue_depth')!.samples.filter((s) => s.labels.name === 'pq_card');
  assert.equal(depth.length, 26);
  assert.equal(depth.find((s) => s.labels.priority === 'exceeded_cardinality_limit')?.value, 5);
  await drain(q);
});
