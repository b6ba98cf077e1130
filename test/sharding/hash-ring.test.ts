/**
 * The sharder's consistent-hash ring and its reading of shard Leases, as pure functions: each of 3 shards gets
 * 0.7–1.3 × a third of 3,000 keys; a shard joining takes keys only for itself and moves well under half of them
 * (a hash modulo n would move two thirds); a shard leaving moves only its own; the ring does not depend on the
 * order shards are listed in. A Lease reads ready, expired, uncertain, dead and orphaned at the documented times.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HashRing } from '../../packages/ctrlmetrics/src/sharding/hash-ring.js';
import {
  LEASE_TTL_MS,
  TAKEOVER_HOLDER,
  readLease,
  takenOver,
} from '../../packages/ctrlmetrics/src/sharding/lease-state.js';

const keys = Array.from({ length: 3000 }, (_, i) => `/ConfigMap/ns-${i % 20}/object-${i}`);
const assign = (ring: HashRing) => new Map(keys.map((k) => [k, ring.shardFor(k)]));

test('3 shards each hold 0.7–1.3 × a third of 3,000 keys, whatever order they are listed in', () => {
  const ring = new HashRing(['shard-0', 'shard-1', 'shard-2']);
  const counts = new Map<string, number>();
  for (const s of assign(ring).values()) counts.set(s!, (counts.get(s!) ?? 0) + 1);
  assert.deepEqual([...counts.keys()].sort(), ['shard-0', 'shard-1', 'shard-2']);
  for (const [shard, n] of counts) assert.ok(n >= 700 && n <= 1300, `${shard} holds ${n} of 3000`);
  const other = new HashRing(['shard-2', 'shard-0', 'shard-1', 'shard-0']);
  for (const k of keys) assert.equal(other.shardFor(k), ring.shardFor(k), k);
});

test('a shard joining takes keys only for itself, under half of them; one leaving gives up only its own', () => {
  const two = assign(new HashRing(['shard-0', 'shard-1']));
  const three = assign(new HashRing(['shard-0', 'shard-1', 'shard-2']));
  let moved = 0;
  for (const k of keys) {
    if (two.get(k) === three.get(k)) continue;
    moved++;
    assert.equal(three.get(k), 'shard-2', `${k} moved to ${three.get(k)}, not to the new shard`);
  }
  assert.ok(moved / keys.length <= 0.45, `${moved} of ${keys.length} keys moved`);
  assert.ok(moved > 0);
  const left = assign(new HashRing(['shard-0', 'shard-2']));
  for (const k of keys) if (three.get(k) !== 'shard-1') assert.equal(left.get(k), three.get(k), k);
  assert.equal(new HashRing([]).shardFor('x'), undefined);
});

test("a shard Lease's states and their times, and the sharder's takeover", () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const lease = (holder: string, renewedAt: number, seconds = 4) => ({
    metadata: { name: 'shard-a' },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: seconds,
      renewTime: new Date(renewedAt).toISOString(),
      leaseTransitions: 2,
    },
  });
  const held = lease('shard-a', t0);
  assert.deepEqual(readLease(held, t0 + 1_000), { state: 'ready', available: true, nextChangeMs: 3_000 });
  assert.deepEqual(readLease(held, t0 + 4_000), { state: 'expired', available: true, nextChangeMs: 4_000 });
  assert.deepEqual(readLease(held, t0 + 7_999), { state: 'expired', available: true, nextChangeMs: 1 });
  assert.deepEqual(readLease(held, t0 + 8_000), { state: 'uncertain', available: true, nextChangeMs: 0 });
  // released (holder emptied, 1 s) or taken over: dead at once, orphaned a minute past expiry
  const released = lease('', t0, 1);
  assert.deepEqual(readLease(released, t0), { state: 'dead', available: false, nextChangeMs: 1_000 + LEASE_TTL_MS });
  assert.equal(readLease(released, t0 + 1_000 + LEASE_TTL_MS).state, 'orphaned');
  assert.equal(readLease(lease('other-pod', t0), t0).state, 'dead', 'a Lease whose holder is not its name');
  assert.equal(readLease({ metadata: { name: 'shard-a' } }, t0).state, 'dead');

  const taken = takenOver(held, t0 + 8_000);
  assert.equal(taken.spec?.holderIdentity, TAKEOVER_HOLDER);
  assert.equal(taken.spec?.leaseDurationSeconds, 8);
  assert.equal(taken.spec?.leaseTransitions, 3);
  assert.equal(taken.spec?.renewTime, '2026-01-01T00:00:08.000000Z');
  assert.equal(readLease(taken, t0 + 8_000).state, 'dead');
  assert.equal(readLease(taken, t0 + 8_000 + 8_000 + LEASE_TTL_MS).state, 'orphaned');
});
