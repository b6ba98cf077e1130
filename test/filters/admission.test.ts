/**
 * The filter's review lanes (src/metrics/filters/admission.ts) with an injected clock: slots, rate, bounded
 * queue, the short wait, 503's Retry-After, and a known token overtaking queued unknown ones.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Admission,
  AdmissionRejectedError,
  type LaneLimits,
} from '../../packages/ctrlmetrics/src/metrics/filters/admission.js';
import { ManualClock } from '../helpers/manual-clock.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

/** A review that finishes when the test says so. */
function pendingCall() {
  let finish!: () => void;
  const done = new Promise<string>((resolve) => (finish = () => resolve('ok')));
  return { fn: () => done, finish };
}

/** Records how each run ended: 'ok', or the rejection's name and Retry-After. */
function track(p: Promise<unknown>) {
  const out: { state: string; error?: AdmissionRejectedError } = { state: 'waiting' };
  p.then(
    () => (out.state = 'ok'),
    (err: unknown) => {
      out.state = err instanceof AdmissionRejectedError ? 'rejected' : 'failed';
      if (err instanceof AdmissionRejectedError) out.error = err;
    },
  );
  return out;
}

const wide: LaneLimits = { concurrency: 2, queue: 3, maxWaitMs: 1_000, qps: 1_000, burst: 1_000 };

describe('review admission lanes', () => {
  test('slots: at most `concurrency` in flight, the rest wait and start in arrival order as slots free', async () => {
    const clock = new ManualClock();
    const adm = new Admission({ new: wide }, clock);
    const calls = Array.from({ length: 4 }, pendingCall);
    const started: number[] = [];
    const runs = calls.map((c, i) => track(adm.run('new', () => (started.push(i), c.fn()))));
    await flush();
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(adm.stats('new'), { inFlight: 2, waiting: 2, admitted: 2, rejected: 0 });
    calls[1].finish();
    await flush();
    assert.deepEqual(started, [0, 1, 2], 'the first waiter takes the freed slot');
    calls[0].finish();
    await flush();
    assert.deepEqual(started, [0, 1, 2, 3]);
    calls[2].finish();
    calls[3].finish();
    await flush();
    assert.deepEqual(
      runs.map((r) => r.state),
      ['ok', 'ok', 'ok', 'ok'],
    );
  });

  test('saturation: a full queue refuses at once with Retry-After; a waiter past maxWaitMs is refused', async () => {
    const clock = new ManualClock();
    const adm = new Admission({ new: wide }, clock);
    const blockers = [pendingCall(), pendingCall()];
    for (const b of blockers) track(adm.run('new', b.fn));
    const queued = Array.from({ length: 3 }, () => track(adm.run('new', async () => 'late')));
    const overflow = track(adm.run('new', async () => 'never'));
    await flush();
    assert.equal(overflow.state, 'rejected', 'the 4th waiter of a queue of 3 is refused without waiting');
    assert.equal(overflow.error!.lane, 'new');
    assert.ok(overflow.error!.retryAfterSeconds >= 1);
    assert.deepEqual(
      queued.map((q) => q.state),
      ['waiting', 'waiting', 'waiting'],
    );
    await clock.advance(999);
    assert.deepEqual(
      queued.map((q) => q.state),
      ['waiting', 'waiting', 'waiting'],
    );
    await clock.advance(1);
    assert.deepEqual(
      queued.map((q) => q.state),
      ['rejected', 'rejected', 'rejected'],
      'no slot within 1 000 ms',
    );
    assert.equal(queued[0].error!.retryAfterSeconds, 1);
    assert.deepEqual(adm.stats('new'), { inFlight: 2, waiting: 0, admitted: 2, rejected: 4 });
    for (const b of blockers) b.finish();
    await flush();
    assert.equal(adm.stats('new').inFlight, 0);
  });

  test('rate: a lane starts at most `burst` at once, then `qps` per second; a start beyond maxWaitMs is refused at once', async () => {
    const clock = new ManualClock();
    const adm = new Admission({ new: { concurrency: 100, queue: 100, maxWaitMs: 1_000, qps: 2, burst: 2 } }, clock);
    const started: number[] = [];
    const runs = Array.from({ length: 5 }, (_, i) => track(adm.run('new', async () => void started.push(i))));
    await flush();
    assert.deepEqual(started, [0, 1], 'the burst');
    // the 3rd can start after 500 ms, the 4th after 1 000 ms; the 5th would need 1 500 ms > maxWaitMs
    assert.equal(runs[4].state, 'rejected');
    assert.equal(runs[4].error!.retryAfterSeconds, 2, 'Retry-After rounds the earliest start up to whole seconds');
    await clock.advance(499);
    assert.deepEqual(started, [0, 1]);
    await clock.advance(1);
    assert.deepEqual(started, [0, 1, 2]);
    await clock.advance(500);
    assert.deepEqual(started, [0, 1, 2, 3]);
    assert.deepEqual(
      runs.map((r) => r.state),
      ['ok', 'ok', 'ok', 'ok', 'rejected'],
    );
  });

  test('a known token overtakes queued unknown ones: the known lane admits it while the new lane is saturated', async () => {
    const clock = new ManualClock();
    const adm = new Admission(
      { new: { ...wide, concurrency: 1, queue: 2 }, known: { ...wide, concurrency: 1 } },
      clock,
    );
    const order: string[] = [];
    const garbage = pendingCall();
    track(adm.run('new', () => (order.push('garbage-1'), garbage.fn())));
    const queuedGarbage = [2, 3].map((i) => track(adm.run('new', async () => void order.push(`garbage-${i}`))));
    const refused = track(adm.run('new', async () => void order.push('garbage-4')));
    const known = track(adm.run('known', async () => void order.push('known')));
    await flush();
    assert.deepEqual(order, ['garbage-1', 'known'], 'the known token ran before the queued garbage');
    assert.equal(known.state, 'ok');
    assert.equal(refused.state, 'rejected');
    assert.deepEqual(
      queuedGarbage.map((q) => q.state),
      ['waiting', 'waiting'],
    );
    garbage.finish();
    await flush();
    assert.deepEqual(order, ['garbage-1', 'known', 'garbage-2', 'garbage-3']);
  });

  test('a failing review frees its slot and its error reaches the caller', async () => {
    const clock = new ManualClock();
    const adm = new Admission({ known: { ...wide, concurrency: 1 } }, clock);
    const failed = adm.run('known', async () => {
      throw new Error('API down');
    });
    await assert.rejects(failed, /API down/);
    assert.equal(await adm.run('known', async () => 'next'), 'next');
    const thrown = adm.run('known', () => {
      throw new Error('sync throw');
    });
    await assert.rejects(thrown, /sync throw/);
    assert.equal(adm.stats('known').inFlight, 0);
  });

  test('limits are checked', () => {
    assert.throws(
      () => new Admission({ new: { concurrency: 0 } }),
      /admission\.new\.concurrency must be a finite number of at least 1, got 0/,
    );
    assert.throws(() => new Admission({ known: { qps: Number.NaN } }), /admission\.known\.qps/);
    assert.doesNotThrow(() => new Admission({ new: { queue: 0 } }));
  });
});
