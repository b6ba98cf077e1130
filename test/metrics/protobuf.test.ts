/**
 * The protobuf exposition read back by client_golang's own decoder (expfmt, test/helpers/client-golang.ts): every
 * family type of ours and of prom-client, families larger than a render slice, and the empty registry. The text
 * 0.0.4 rendering of the same snapshot is the reference (it is byte for byte client_golang's, see
 * client-golang.differential.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as promClient from 'prom-client';
import { Counter, Gauge, Histogram, MetricsSnapshot, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { decodeProtobufWithGo } from '../helpers/client-golang.js';

async function roundTrip(r: Registry): Promise<{ decoded: string; text: string; bytes: number }> {
  const snap = await r.collect();
  const pb = await snap.bytes('protobuf');
  return { decoded: await decodeProtobufWithGo(pb), text: await snap.text('text'), bytes: pb.length };
}

test('prom-client counters, gauges, histograms and summaries: decoded as the text we render', async () => {
  const pr = new promClient.Registry();
  const c = new promClient.Counter({ name: 'pc_jobs_total', help: 'Jobs', labelNames: ['kind'], registers: [pr] });
  c.inc({ kind: 'nightly' }, 3);
  c.inc({ kind: 'adhoc' });
  new promClient.Gauge({ name: 'pc_depth', help: 'Depth', registers: [pr] }).set(-2.5);
  const h = new promClient.Histogram({
    name: 'pc_latency_seconds',
    help: 'Latency',
    labelNames: ['op'],
    buckets: [0.1, 1, 10],
    registers: [pr],
  });
  for (const v of [0.05, 0.5, 5, 50]) h.observe({ op: 'get' }, v);
  h.observe({ op: 'put' }, 0.2);
  const s = new promClient.Summary({
    name: 'pc_size_bytes',
    help: 'Sizes',
    percentiles: [0.5, 0.9, 0.99],
    registers: [pr],
  });
  for (let i = 1; i <= 100; i++) s.observe(i);
  new promClient.Summary({ name: 'pc_empty_summary', help: 'No observations', percentiles: [0.5], registers: [pr] });

  const r = new Registry();
  r.mustRegister(pr);
  const { decoded, text } = await roundTrip(r);
  assert.match(text, /^pc_latency_seconds_bucket\{op="get",le="1"\} 2$/m);
  assert.match(text, /^pc_size_bytes\{quantile="0.9"\} /m);
  assert.match(text, /^pc_empty_summary_count 0$/m);
  assert.equal(decoded, text);
});

test('families larger than a render slice, and many small ones: decoded as the text we render', async () => {
  const r = new Registry();
  const registers = [r];
  const big = new Counter({ name: 'big_total', help: 'Many series', labelNames: ['id', 'shard'], registers });
  for (let i = 0; i < 3000; i++) big.labels(`obj-${i}`, String(i % 7)).inc(i);
  const hist = new Histogram({
    name: 'big_seconds',
    help: 'Many histograms',
    labelNames: ['id'],
    buckets: [0.01, 0.1, 1],
    registers,
  });
  for (let i = 0; i < 400; i++) hist.labels(`h-${i}`).observe(i / 100);
  for (let f = 0; f < 50; f++) new Gauge({ name: `small_${f}`, help: `Small ${f}`, registers }).set(f);
  // slices of 64 lines: the big families span dozens of slices, and small ones are flushed in between
  const snap = new MetricsSnapshot((await r.collect()).families, 64);
  const chunks: Buffer[] = [];
  for await (const c of snap.chunks('protobuf')) chunks.push(c);
  assert.ok(chunks.length > 1, `rendered in ${chunks.length} chunks`);
  const decoded = await decodeProtobufWithGo(Buffer.concat(chunks));
  assert.equal(decoded, await snap.text('text'));
  assert.match(decoded, /^big_total\{id="obj-2999",shard="3"\} 2999$/m);
});

test('a family without series is left out; an empty registry is an empty body', async () => {
  const r = new Registry();
  new Counter({ name: 'unused_total', help: 'Never used', labelNames: ['x'], registers: [r] });
  assert.equal((await roundTrip(r)).bytes, 0);
  new Gauge({ name: 'used', help: 'Used', registers: [r] }).set(1);
  const { decoded, text } = await roundTrip(r);
  assert.equal(decoded, '# HELP used Used\n# TYPE used gauge\nused 1\n');
  assert.equal(decoded, text);
});

test('label pairs are encoded once per series and follow values that change between scrapes', async () => {
  const r = new Registry();
  const c = new Counter({ name: 'changing_total', help: 'Changing', labelNames: ['b', 'a'], registers: [r] });
  c.labels('2', '1').inc();
  const first = await roundTrip(r);
  assert.equal(first.decoded, first.text);
  c.labels('2', '1').inc(4);
  c.labels('0', '9').inc(); // a new series reorders the cells
  const second = await roundTrip(r);
  assert.equal(second.decoded, second.text);
  assert.match(second.decoded, /^changing_total\{a="1",b="2"\} 5$/m);
});

test('counts beyond 2^32 are written as 64-bit varints', async () => {
  const r = new Registry();
  const h = new Histogram({ name: 'huge_seconds', help: 'Huge counts', buckets: [1, 2], registers: [r] });
  h.observe(0.5);
  // a long-lived histogram's counts, set directly: observing 5 billion times would take minutes
  const cell = h.labels().cell;
  cell.counts[0] = 4_294_967_296;
  cell.counts[1] = 5_000_000_000;
  cell.count = 9_294_967_297;
  cell.sum = 1e10;
  const { decoded, text } = await roundTrip(r);
  assert.match(decoded, /^huge_seconds_bucket\{le="1"\} 4\.294967296e\+09$/m);
  assert.match(decoded, /^huge_seconds_count 9\.294967297e\+09$/m);
  assert.equal(decoded, text);
});

test('an untyped family (a prom-client-style metric of unknown type) is written as UNTYPED', async () => {
  const r = new Registry();
  r.mustRegister({
    name: 'legacy_thing',
    get: () => ({
      name: 'legacy_thing',
      help: 'Of no known type',
      type: 'mystery',
      values: [
        { value: 7, labels: { zone: 'b' } },
        { value: 1.5, labels: { zone: 'a' } },
      ],
    }),
  });
  const { decoded, text } = await roundTrip(r);
  assert.equal(
    decoded,
    '# HELP legacy_thing Of no known type\n# TYPE legacy_thing untyped\nlegacy_thing{zone="b"} 7\nlegacy_thing{zone="a"} 1.5\n',
  );
  assert.equal(decoded, text);
});
