/** The API client's token bucket (client-go's QPS/Burst) with an injected clock: burst, refill, and QPS < 0 = no limit. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from '../../packages/ctrlmetrics/src/kube/ratelimit.js';

test('the default 20 qps / burst 30: 30 at once, then one every 50 ms', () => {
  let now = 1_000;
  const b = new TokenBucket(20, 30, () => now);
  let taken = 0;
  while (b.tryTake()) taken++;
  assert.equal(taken, 30);
  assert.equal(b.waitMs(), 50);
  now += 49;
  assert.equal(b.tryTake(), false);
  now += 1;
  assert.equal(b.tryTake(), true);
  now += 10_000;
  taken = 0;
  while (b.tryTake()) taken++;
  assert.equal(taken, 30, 'refills up to the burst, not beyond');
});

test("a negative qps turns the limit off, as client-go and controller-runtime's GetConfig (QPS -1)", async () => {
  const b = new TokenBucket(-1, 0, () => 0);
  for (let i = 0; i < 10_000; i++) assert.equal(b.tryTake(), true);
  assert.equal(await b.take(0), true);
});
