import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  Workqueue,
  defaultControllerRateLimiter,
} from '../../packages/ctrlmetrics/src/controller/index.js';
import { scrapeRegistry } from './helpers/scrape.js';
import { value } from './helpers/exposition.js';
import { propertyParams } from '../helpers/property.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** get() with a time limit, so a bug fails the test instead of hanging it. */
async function getWithin<T>(q: Workqueue<T>, ms = 2_000) {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      q.get(),
      new Promise<never>((_, rej) => {
        t = setTimeout(() => rej(new Error(`get() did not return within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(t);
  }
}

test('per-item exponential backoff doubles from the base and is capped (5 ms → 1000 s by default)', () => {
  const l = new ItemExponentialFailureRateLimiter<string>();
  const delays = Array.from({ length: 5 }, () => l.when('a'));
  assert.deepEqual(delays, [5, 10, 20, 40, 80]);
  assert.equal(l.numRequeues('a'), 5);
  assert.equal(l.when('b'), 5, 'items are independent');
  for (let i = 0; i < 40; i++) l.when('a');
  assert.equal(l.when('a'), 1_000_000, 'capped at 1000 s');
  l.forget('a');
  assert.equal(l.numRequeues('a'), 0);
  assert.equal(l.when('a'), 5, 'forget resets the backoff');
});

test('the overall token bucket allows a burst of 100, then 10 per second', () => {
  let now = 0;
  const l = new BucketRateLimiter<string>(10, 100, () => now);
  for (let i = 0; i < 100; i++) assert.equal(l.when(), 0, `token ${i} of the burst`);
  assert.equal(l.when(), 100, 'the 101st waits one token time (100 ms at 10 qps)');
  assert.equal(l.when(), 200, 'reservations queue up');
  now += 1_000; // 10 tokens refill: the two reservations are repaid and 8 remain
  assert.equal(l.when(), 0);
});

test('the default controller rate limiter takes the larger of backoff and bucket', () => {
  const l = defaultControllerRateLimiter<string>();
  assert.equal(l.when('x'), 5);
  assert.equal(l.when('x'), 10);
  const m = new MaxOfRateLimiter<string>(
    new ItemExponentialFailureRateLimiter(1, 1000),
    new BucketRateLimiter(1, 1, () => 0),
  );
  assert.equal(m.when('a'), 1, 'bucket has a token, backoff wins');
  assert.equal(m.when('a'), 1000, 'bucket empty: 1 s at 1 qps wins over 2 ms');
});

test('an item waiting in the queue is held once however often it is added', async () => {
  const q = new Workqueue<string>({ name: 'wq_dedup' });
  q.add('a');
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  const fams = await scrapeRegistry();
  assert.equal(value(fams, 'workqueue_adds_total', { name: 'wq_dedup', controller: 'wq_dedup' }), 2);
  assert.equal(value(fams, 'workqueue_depth', { name: 'wq_dedup', controller: 'wq_dedup', priority: '' }), 2);
  assert.equal((await getWithin(q)).item, 'a', 'FIFO');
  assert.equal((await getWithin(q)).item, 'b');
  q.shutDown();
});

test('an item added while it is processed is queued again when done, not handed to a second worker', async () => {
  const q = new Workqueue<string>({ name: 'wq_reprocess' });
  q.add('a');
  const first = await getWithin(q);
  assert.equal(first.item, 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'not handed out twice at the same time');
  // client-go: the re-add counts at once (depth 1, a second add), though it is handed out only after done
  const during = await scrapeRegistry();
  assert.equal(value(during, 'workqueue_depth', { name: 'wq_reprocess', controller: 'wq_reprocess', priority: '' }), 1);
  assert.equal(value(during, 'workqueue_adds_total', { name: 'wq_reprocess', controller: 'wq_reprocess' }), 2);
  const second = q.get();
  let got = false;
  void second.then(() => (got = true));
  await sleep(20);
  assert.equal(got, false, 'the second worker waits');
  q.done('a');
  assert.equal((await second).item, 'a', 'queued again after done');
  q.done('a');
  assert.equal(q.len(), 0, 'and only once');
  q.shutDown();
});

test('addAfter holds an item back; the earliest pending time wins; retries are counted', async () => {
  const q = new Workqueue<string>({ name: 'wq_delay' });
  const t0 = performance.now();
  q.addAfter('a', 300);
  q.addAfter('a', 40); // earlier: wins
  q.addAfter('a', 500); // later: ignored
  assert.equal(q.len(), 0);
  assert.equal(q.waitingLen(), 1);
  const r = await getWithin(q);
  const waited = performance.now() - t0;
  assert.equal(r.item, 'a');
  assert.ok(waited >= 35 && waited < 250, `released after the earliest delay (${waited.toFixed(0)} ms)`);
  q.done('a');
  await sleep(400);
  assert.equal(q.len(), 0, 'the superseded delays do not add it again');
  const fams = await scrapeRegistry();
  assert.equal(value(fams, 'workqueue_retries_total', { name: 'wq_delay' }), 3);
  q.addAfter('b', 0);
  assert.equal(q.len(), 1, 'no delay: queued at once');
  assert.equal(
    value(await scrapeRegistry(), 'workqueue_retries_total', { name: 'wq_delay' }),
    4,
    'client-go counts AddAfter with no delay as a retry too',
  );
  q.shutDown();
});

test('addRateLimited backs off exponentially per item and forget resets it', async () => {
  const q = new Workqueue<string>({
    name: 'wq_backoff',
    rateLimiter: new ItemExponentialFailureRateLimiter(20, 10_000),
  });
  const waits: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    q.addRateLimited('a');
    const r = await getWithin(q);
    waits.push(performance.now() - t0);
    q.done(r.item!);
  }
  // 20, 40, 80, 160 ms (timers may fire late, never early)
  [20, 40, 80, 160].forEach((min, i) =>
    assert.ok(waits[i] >= min - 2, `attempt ${i + 1} waited ${waits[i].toFixed(0)} ms ≥ ${min}`),
  );
  assert.ok(waits[3] > waits[0] * 3, `backoff grows: ${waits.map((w) => w.toFixed(0)).join(', ')}`);
  assert.equal(q.numRequeues('a'), 4);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
  const t0 = performance.now();
  q.addRateLimited('a');
  await getWithin(q);
  assert.ok(performance.now() - t0 < 150, 'back to the base delay');
  q.shutDown();
});

test('queue and work durations are observed, unfinished work and the longest processor are reported', async () => {
  const q = new Workqueue<string>({ name: 'wq_timing', unfinishedWorkUpdatePeriodMs: 50 });
  q.add('a');
  await sleep(30);
  const r = await getWithin(q);
  await sleep(250);
  let fams = await scrapeRegistry();
  const unfinished = value(fams, 'workqueue_unfinished_work_seconds', { name: 'wq_timing' })!;
  const longest = value(fams, 'workqueue_longest_running_processor_seconds', { name: 'wq_timing' })!;
  assert.ok(unfinished >= 0.15 && unfinished < 5, `unfinished ${unfinished}`);
  assert.ok(longest >= 0.15 && longest < 5, `longest ${longest}`);
  q.done(r.item!);
  await sleep(120);
  fams = await scrapeRegistry();
  assert.equal(value(fams, 'workqueue_unfinished_work_seconds', { name: 'wq_timing' }), 0);
  assert.equal(value(fams, 'workqueue_queue_duration_seconds_count', { name: 'wq_timing' }), 1);
  const queued = value(fams, 'workqueue_queue_duration_seconds_sum', { name: 'wq_timing' })!;
  assert.ok(queued >= 0.025 && queued < 2, `queue duration ${queued}`);
  const work = value(fams, 'workqueue_work_duration_seconds_sum', { name: 'wq_timing' })!;
  assert.ok(work >= 0.24 && work < 5, `work duration ${work}`);
  // 0.025–2 s lands in the (0.01, 0.1] or (0.1, 1] or (1, 10] bucket; everything is ≤ +Inf
  assert.equal(value(fams, 'workqueue_queue_duration_seconds_bucket', { name: 'wq_timing', le: '+Inf' }), 1);
  assert.equal(value(fams, 'workqueue_queue_duration_seconds_bucket', { name: 'wq_timing', le: '0.001' }), 0);
  q.shutDown();
});

test('shutdown wakes waiting workers and refuses new items; queued items are still handed out (client-go), delayed ones dropped', async () => {
  const q = new Workqueue<string>({ name: 'wq_shutdown' });
  const waiting = q.get();
  q.shutDown();
  assert.deepEqual(await waiting, { item: undefined, shutdown: true });
  q.add('a');
  q.addAfter('b', 10);
  assert.equal(q.len(), 0);
  assert.equal((await getWithin(q)).shutdown, true);

  const r = new Workqueue<string>({ name: 'wq_shutdown_queued' });
  r.add('x');
  r.add('y');
  r.addAfter('z', 10);
  r.shutDown();
  assert.equal((await getWithin(r)).item, 'x');
  assert.equal((await getWithin(r)).item, 'y');
  assert.equal((await getWithin(r)).shutdown, true, 'then shutdown; z, still delayed, was dropped');
  await sleep(30);
  assert.equal(r.len(), 0);
});

test('shutDownWithDrain hands out the queued items and resolves once every item is done', async () => {
  const q = new Workqueue<string>({ name: 'wq_drain' });
  q.add('a');
  q.add('b');
  const a = await getWithin(q);
  let drained = false;
  const d = q.shutDownWithDrain(5_000).then((ok) => (drained = ok));
  q.add('c');
  const b = await getWithin(q);
  assert.equal(b.item, 'b', 'queued items are still handed out');
  assert.equal((await getWithin(q)).shutdown, true, 'then shutdown, c was refused');
  await sleep(20);
  assert.equal(drained, false, 'a and b are still being processed');
  q.done(a.item!);
  q.done(b.item);
  await d;
  assert.equal(drained, true);
});

test('shutDownWithDrain gives up after its timeout when an item is never done', async () => {
  const q = new Workqueue<string>({ name: 'wq_drain_timeout' });
  q.add('a');
  await getWithin(q);
  const t0 = performance.now();
  assert.equal(await q.shutDownWithDrain(100), false);
  assert.ok(performance.now() - t0 >= 95);
});

test('property: the queue matches a model of de-duplication, FIFO order and re-queue on done', async () => {
  const fc = await import('fast-check');
  const op = fc.oneof(
    fc.record({ kind: fc.constant('add' as const), key: fc.constantFrom('a', 'b', 'c', 'd') }),
    fc.record({ kind: fc.constant('get' as const) }),
    fc.record({ kind: fc.constant('done' as const), pick: fc.nat(3) }),
  );
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
      const q = new Workqueue<string>({ name: `wq_model_${run++}`, metrics: false });
      const waiting: string[] = [];
      const processing: string[] = [];
      const dirty = new Set<string>();
      for (const o of ops) {
        if (o.kind === 'add') {
          q.add(o.key);
          if (processing.includes(o.key)) dirty.add(o.key);
          else if (!waiting.includes(o.key)) waiting.push(o.key);
        } else if (o.kind === 'get') {
          if (waiting.length === 0) continue; // get() would wait
          const r = await q.get();
          const expected = waiting.shift()!;
          assert.equal(r.item, expected);
          assert.ok(!processing.includes(expected), 'never handed out twice at once');
          processing.push(expected);
        } else {
          if (processing.length === 0) continue;
          const k = processing.splice(o.pick % processing.length, 1)[0];
          q.done(k);
          if (dirty.delete(k)) waiting.push(k);
        }
        assert.equal(q.len(), waiting.length);
        assert.equal(q.processingLen(), processing.length);
      }
      q.shutDown();
    }),
    propertyParams(300),
  );
});
