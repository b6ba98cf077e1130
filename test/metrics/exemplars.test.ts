/**
 * Exemplars: client_golang's `AddWithExemplar` / `ObserveWithExemplar` behaviour (the latest exemplar
 * wins, a histogram's goes to the bucket the observation counts in, +Inf included), its validation (label names,
 * 128 runes), and where they are written: OpenMetrics after the sample, protobuf `Counter.exemplar` /
 * `Bucket.exemplar`, never text 0.0.4. Expected lines are written by hand from
 * ../shared/reference/client-golang-exposition.md §9; the protobuf is read back by client_golang's decoder and the
 * OpenMetrics by Python's prometheus_client parser.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as promClient from 'prom-client';
import { Counter, Histogram, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { decodeProtobufToOpenMetricsWithGo } from '../helpers/client-golang.js';

const T = 1_700_000_000_123;
/** `T` as client_golang writes it: UnixNano / 1e9 as an OpenMetrics float. */
const T_OM = '1.7000000001230001e+09';

function setUp(): { r: Registry; h: Histogram; c: Counter } {
  const r = new Registry();
  const h = new Histogram({
    name: 'reconcile_seconds',
    help: 'h',
    buckets: [0.25, 1],
    labelNames: ['controller'],
    registers: [r],
    now: () => T,
  });
  const c = new Counter({ name: 'jobs_total', help: 'c', registers: [r], now: () => T });
  return { r, h, c };
}

describe('OpenMetrics', () => {
  test("a counter's latest exemplar follows its sample; a histogram's follow their buckets, +Inf included", async () => {
    const { r, h, c } = setUp();
    c.addWithExemplar(1, { trace_id: 'first' });
    c.addWithExemplar(2, { trace_id: 'c1', span_id: 's' });
    const child = h.labels('cm');
    child.observeWithExemplar(0.2, { reconcile_id: 'abc' });
    child.observeWithExemplar(5, { reconcile_id: 'slow' });
    child.observe(0.5);
    const om = await (await r.collect()).text('openmetrics');
    assert.equal(
      om,
      [
        '# HELP jobs c',
        '# TYPE jobs counter',
        `jobs_total 3 # {span_id="s",trace_id="c1"} 2.0 ${T_OM}`,
        '# HELP reconcile_seconds h',
        '# TYPE reconcile_seconds histogram',
        `reconcile_seconds_bucket{controller="cm",le="0.25"} 1 # {reconcile_id="abc"} 0.2 ${T_OM}`,
        'reconcile_seconds_bucket{controller="cm",le="1.0"} 2',
        `reconcile_seconds_bucket{controller="cm",le="+Inf"} 3 # {reconcile_id="slow"} 5.0 ${T_OM}`,
        'reconcile_seconds_sum{controller="cm"} 5.7',
        'reconcile_seconds_count{controller="cm"} 3',
        '# EOF',
        '',
      ].join('\n'),
    );
    const text = await (await r.collect()).text('text');
    assert.ok(!text.includes('#  {') && !text.includes('trace_id'), 'text 0.0.4 has no exemplars');
  });

  test('an exemplar without labels is kept but not written (client_golang skips it)', async () => {
    const { r, c } = setUp();
    c.addWithExemplar(1, {});
    assert.match(await (await r.collect()).text('openmetrics'), /^jobs_total 1$/m);
  });

  test("Python's prometheus_client reads the exemplars", async () => {
    const { r, h, c } = setUp();
    c.addWithExemplar(2, { trace_id: 'c1' });
    h.labels('cm').observeWithExemplar(0.2, { reconcile_id: 'abc' });
    const script = [
      'import sys, json',
      'from prometheus_client.openmetrics.parser import text_string_to_metric_families',
      'for f in text_string_to_metric_families(sys.stdin.read()):',
      '    for s in f.samples:',
      '        if s.exemplar: print(json.dumps([s.name, s.labels, s.exemplar.labels, s.exemplar.value]))',
    ].join('\n');
    const body = await (await r.collect()).text('openmetrics');
    const out = await new Promise<string>((res, rej) => {
      const child = execFile('/usr/bin/python3', ['-c', script], { timeout: 60_000 }, (err, stdout, stderr) =>
        err ? rej(new Error(stderr || err.message)) : res(stdout),
      );
      child.stdin!.on('error', () => {}); // an early exit closes the pipe: the exit status tells
      child.stdin!.end(body);
    });
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
      [
        ['jobs_total', {}, { trace_id: 'c1' }, 2],
        ['reconcile_seconds_bucket', { controller: 'cm', le: '0.25' }, { reconcile_id: 'abc' }, 0.2],
      ],
    );
  });
});

describe('protobuf', () => {
  test('Counter.exemplar and Bucket.exemplar, and a +Inf bucket only to carry one: client_golang decodes them', async () => {
    const { r, h, c } = setUp();
    c.addWithExemplar(2, { trace_id: 'c1' });
    h.labels('cm').observeWithExemplar(0.2, { reconcile_id: 'abc' });
    h.labels('cm').observeWithExemplar(5, { reconcile_id: 'slow' });
    h.labels('other').observe(0.1);
    const om = await decodeProtobufToOpenMetricsWithGo(await (await r.collect()).bytes('protobuf'));
    for (const line of [
      `jobs_total 2.0 # {trace_id="c1"} 2.0 ${T_OM}`,
      `reconcile_seconds_bucket{controller="cm",le="0.25"} 1 # {reconcile_id="abc"} 0.2 ${T_OM}`,
      `reconcile_seconds_bucket{controller="cm",le="+Inf"} 2 # {reconcile_id="slow"} 5.0 ${T_OM}`,
      'reconcile_seconds_bucket{controller="other",le="+Inf"} 1',
    ]) {
      assert.ok(om.split('\n').includes(line), `missing ${line} in\n${om}`);
    }
  });
});

describe('validation', () => {
  test('128 runes of names and values at most; names are label names; a refused exemplar changes nothing', () => {
    const { h, c } = setUp();
    assert.throws(
      () => c.addWithExemplar(1, { trace_id: 'x'.repeat(121) }),
      /exemplar labels have 129 runes, exceeding the limit of 128/,
    );
    c.addWithExemplar(1, { trace_id: 'é'.repeat(120) }); // 128 runes (240 bytes): accepted, as client_golang counts runes
    assert.throws(() => c.addWithExemplar(1, { __reserved: 'x' }), /exemplar invalid label name "__reserved"/);
    assert.throws(() => c.addWithExemplar(1, { trace_id: 'a\uD800' }), /needs a UTF-8 string value/);
    assert.throws(() => c.addWithExemplar(-1, { trace_id: 'x' }), /non-negative/);
    assert.equal(c.get(), 1);
    assert.throws(() => h.labels('cm').observeWithExemplar(1, { id: 'y'.repeat(200) }), RangeError);
    assert.equal(h.labels('cm').cell.count, 0);
  });
});

describe('prom-client', () => {
  test("a prom-client metric's exemplars are carried into OpenMetrics and protobuf", async () => {
    const pr = new promClient.Registry();
    pr.setContentType(
      promClient.Registry.OPENMETRICS_CONTENT_TYPE as typeof promClient.Registry.PROMETHEUS_CONTENT_TYPE,
    );
    const pc = new promClient.Counter({
      name: 'pc_requests_total',
      help: 'p',
      labelNames: ['code'],
      registers: [pr],
      enableExemplars: true,
    });
    // prom-client 15's types want exemplar labels among the metric's own label names; its runtime does not
    pc.inc({
      labels: { code: '200' },
      value: 2,
      exemplarLabels: { trace_id: 'p1' } as unknown as Record<'code', string>,
    });
    const ph = new promClient.Histogram({
      name: 'pc_latency_seconds',
      help: 'p',
      buckets: [0.5],
      registers: [pr],
      enableExemplars: true,
    });
    ph.observe({ labels: {}, value: 0.1, exemplarLabels: { trace_id: 'p2' } });
    const r = new Registry();
    r.register(pr);
    const snap = await r.collect();
    const om = await snap.text('openmetrics');
    assert.match(om, /^pc_requests_total\{code="200"\} 2 # \{trace_id="p1"\} 2\.0 \d\.\d+e\+09$/m);
    assert.match(om, /^pc_latency_seconds_bucket\{le="0\.5"\} 1 # \{trace_id="p2"\} 0\.1 \d\.\d+e\+09$/m);
    const go = await decodeProtobufToOpenMetricsWithGo(await snap.bytes('protobuf'));
    assert.match(go, /^pc_requests_total\{code="200"\} 2\.0 # \{trace_id="p1"\} 2\.0 \d\.\d+e\+09$/m);
    assert.match(go, /^pc_latency_seconds_bucket\{le="0\.5"\} 1 # \{trace_id="p2"\} 0\.1 \d\.\d+e\+09$/m);
  });
});
