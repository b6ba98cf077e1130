/**
 * Native histograms against client_golang: Debian's client_golang (test/differential/client_golang,
 * `native` mode) fed the same observations as ours; ours written in protobuf and read back by expfmt's decoder
 * (`native-decode`): the same schema, zero threshold and count, spans and deltas, classic buckets, count and sum.
 * The bounds table is compared entry by entry with client_golang's own. Resets, which client_golang times with
 * the wall clock, are checked against the algorithm with an injected clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import {
  bucketKey,
  positiveSchemaBounds,
  schemaForFactor,
  spansAndDeltas,
} from '../../packages/ctrlmetrics/src/metrics/native-buckets.js';
import { clientGolang } from '../helpers/client-golang.js';

interface Spec {
  factor: number;
  zeroThreshold?: number;
  maxBucketNumber?: number;
  maxZeroThreshold?: number;
  buckets?: number[];
  observations: number[];
}

async function goNative(spec: Spec): Promise<unknown> {
  // as strings: JSON has no Infinity or NaN (JSON.stringify writes null, which Go reads as 0)
  const input = { ...spec, observations: spec.observations.map(String) };
  return JSON.parse((await clientGolang(['native'], Buffer.from(JSON.stringify(input)))).toString('utf8'));
}

async function oursNative(spec: Spec): Promise<unknown> {
  const r = new Registry();
  const h = new Histogram({
    name: 'native',
    help: 'native',
    registers: [r],
    ...(spec.buckets ? { buckets: spec.buckets } : {}),
    nativeHistogramBucketFactor: spec.factor,
    nativeHistogramZeroThreshold: spec.zeroThreshold ?? 0,
    nativeHistogramMaxBucketNumber: spec.maxBucketNumber ?? 0,
    nativeHistogramMaxZeroThreshold: spec.maxZeroThreshold ?? 0,
  });
  for (const v of spec.observations) h.observe(v);
  const pb = await (await r.collect()).bytes('protobuf');
  return JSON.parse((await clientGolang(['native-decode'], pb)).toString('utf8'));
}

/**
 * Deterministic pseudo-random observations: log-uniform over 40 powers of two from 2^minExp, both signs.
 * Schemas ≤ 0 are compared on values ≥ 1 only: Debian's client_golang 1.14 divides negative keys with Go's
 * truncating `/` there, which later versions (v1.23, controller-runtime v0.24's) replaced by a flooring shift, the
 * rule ours follows (tested on its own below).
 */
function spread(n: number, seed: number, signs = true, minExp = -20): number[] {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = 2 ** (next() * 40 + minExp);
    out.push(signs && next() < 0.2 ? -v : v);
  }
  return out;
}

test("the bounds of every positive schema are client_golang's, bit for bit", async () => {
  const lines = (await clientGolang(['native-bounds'])).toString('utf8').trim().split('\n');
  assert.equal(lines.length, 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + 256);
  const bits = new DataView(new ArrayBuffer(8));
  let compared = 0;
  for (const line of lines) {
    const [s, i, hex] = line.split(' ');
    if (s === '0') continue; // schema 0 has the one bound 0.5 and is not searched
    bits.setBigUint64(0, BigInt(`0x${hex}`));
    assert.equal(positiveSchemaBounds(Number(s))[Number(i)], bits.getFloat64(0), `schema ${s} bound ${i}`);
    compared++;
  }
  assert.equal(compared, 510);
});

test('schemas of bucket factors, keys at bucket edges, spans and deltas: the reference examples', () => {
  assert.deepEqual([1.1, 1.01, 1.5, 2, 4, 1.0001, 1e9].map(schemaForFactor), [3, 7, 1, 0, -1, 8, -4]);
  // bucket k holds (2^((k-1)/8), 2^(k/8)]: 1 is the upper bound of key 0
  assert.equal(bucketKey(1, 3), 0);
  assert.equal(bucketKey(1.0000001, 3), 1);
  assert.equal(bucketKey(2, 0), 1);
  assert.equal(bucketKey(3, -1), 1);
  // schemas ≤ 0 below 1: bucket k holds (4^(k-1), 4^k] at schema -1, so 0.25 and 0.2 are in bucket -1, 0.0625 in -2
  // (client_golang ≥ 1.15 floors; Debian's 1.14 truncated these to 0 and -1)
  assert.equal(bucketKey(0.25, -1), -1);
  assert.equal(bucketKey(0.2, -1), -1);
  assert.equal(bucketKey(0.0625, -1), -2);
  assert.equal(bucketKey(0.0002, -1), -6);
  assert.equal(bucketKey(0.01, -4), 0);
  assert.equal(bucketKey(1e-5, -4), -1);
  assert.deepEqual(
    spansAndDeltas(
      new Map([
        [0, 1],
        [1, 2],
        [4, 1],
        [10, 3],
      ]),
    ),
    {
      spans: [
        { offset: 0, length: 5 },
        { offset: 5, length: 1 },
      ],
      deltas: [1, 1, -2, 0, 1, 2],
    },
  );
});

const CASES: Array<[string, Spec]> = [
  [
    "factor 1.1 (controller-runtime's), both signs, the zero bucket, ±Inf and NaN",
    {
      factor: 1.1,
      observations: [0.001, 0.01, 0.1, 1, 10, -3, 0, 1e-45, Infinity, -Infinity, NaN, 1, 1.0905077326652577],
    },
  ],
  [
    'the classic buckets kept beside the native ones',
    { factor: 1.1, buckets: [0.005, 0.01, 0.1, 1, 10], observations: spread(500, 7) },
  ],
  ['factor 1.01 (schema 7) over 40 powers of two', { factor: 1.01, observations: spread(2000, 11) }],
  ['factor 4 (schema -1), values from 1 up', { factor: 4, observations: spread(300, 3, true, 0) }],
  ['factor 2 (schema 0), values on both sides of 1', { factor: 2, observations: spread(300, 4) }],
  [
    'a bucket limit: the resolution halves as buckets fill',
    { factor: 1.1, maxBucketNumber: 20, observations: spread(1000, 5, true, 0) },
  ],
  [
    'a bucket limit with room to widen the zero bucket first',
    { factor: 1.1, maxBucketNumber: 10, maxZeroThreshold: 0.01, observations: spread(400, 9) },
  ],
  [
    'a zero threshold of exactly 0 (NativeHistogramZeroThresholdZero)',
    { factor: 1.5, zeroThreshold: -1, observations: [0, 0, 1e-300, -1e-300, 5] },
  ],
  ['a wide zero threshold', { factor: 1.5, zeroThreshold: 0.5, observations: [0.1, -0.4, 0.5, -0.5, 0.6, 3] }],
];

for (const [name, spec] of CASES) {
  test(`the same native buckets as client_golang: ${name}`, async () => {
    const [go, ours] = await Promise.all([goNative(spec), oursNative(spec)]);
    assert.deepEqual(ours, go);
  });
}

test('an empty native histogram with a zero threshold of 0 carries a no-op span, as client_golang writes it', async () => {
  const r = new Registry();
  new Histogram({
    name: 'empty',
    help: 'empty',
    registers: [r],
    nativeHistogramBucketFactor: 1.1,
    nativeHistogramZeroThreshold: -1,
  });
  const got = JSON.parse(
    (await clientGolang(['native-decode'], await (await r.collect()).bytes('protobuf'))).toString('utf8'),
  ) as { positiveSpans: unknown; zeroThreshold: number };
  assert.deepEqual(got.positiveSpans, [{ offset: 0, length: 0 }]);
  assert.equal(got.zeroThreshold, 0);
});

test('over the bucket limit: a reset once the minimum reset duration has passed, else one scheduled for then', async () => {
  let now = 1_000_000;
  const r = new Registry();
  const h = new Histogram({
    name: 'resets',
    help: 'resets',
    registers: [r],
    buckets: [1],
    nativeHistogramBucketFactor: 1.1,
    nativeHistogramMaxBucketNumber: 3,
    nativeHistogramMinResetDuration: 60_000,
    now: () => now,
  });
  const cell = () => h.labels().cell;
  h.observe(1);
  h.observe(2);
  h.observe(4);
  assert.equal(cell().native!.buckets, 3);
  // a fourth bucket within the minute: no reset yet; one is scheduled for creation + 1 min, and the schema drops
  now += 10_000;
  h.observe(8);
  assert.equal(cell().native!.resetAt, 1_060_000);
  assert.equal(cell().native!.schema, 2);
  assert.equal(cell().count, 4);
  // the scheduled time passes: the next scrape shows a fresh series, created at the scheduled time
  now = 1_070_000;
  const text = await (await r.collect()).text('text');
  assert.match(text, /^resets_count 0$/m);
  assert.equal(cell().created, 1_060_000);
  assert.equal(cell().native!.schema, 3);
  // over the limit again once the minimum duration has passed since that reset: a reset keeping the last observation
  h.observe(1);
  h.observe(2);
  h.observe(4);
  now = 1_060_000 + 60_000;
  h.observe(8);
  assert.equal(cell().created, 1_120_000);
  assert.equal(cell().count, 1, 'only the observation that went over the limit is left');
  assert.equal(cell().sum, 8);
  assert.deepEqual([...cell().native!.positive], [[bucketKey(8, 3), 1]]);
});

test('text formats show only the classic buckets; a native-only histogram has just +Inf, _sum and _count', async () => {
  const r = new Registry();
  const h = new Histogram({ name: 'only_native', help: 'x', registers: [r], nativeHistogramBucketFactor: 1.1 });
  h.observe(0.3);
  h.observe(3);
  assert.equal(
    await (await r.collect()).text('text'),
    '# HELP only_native x\n# TYPE only_native histogram\nonly_native_bucket{le="+Inf"} 2\nonly_native_sum 3.3\nonly_native_count 2\n',
  );
});
