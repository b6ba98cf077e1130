/**
 * Exposition of our metric classes in Prometheus text 0.0.4 and OpenMetrics 1.0.0, checked with independent parsers,
 * `promtool check metrics`, and expected values written by hand from the format rules.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  formatFloat,
  exponentialBuckets,
  linearBuckets,
} from '../../packages/ctrlmetrics/src/metrics/index.js';
import * as promClient from 'prom-client';
import { parseExposition, promtoolCheck, value } from '../controller/helpers/exposition.js';
import { parseOpenMetrics } from './openmetrics-parser.js';

function fixture() {
  const r = new Registry();
  const c = new Counter({
    name: 'jobs_total',
    help: 'Jobs "done"\nper kind \\ queue',
    labelNames: ['kind', 'queue'],
    registers: [r],
  });
  const g = new Gauge({ name: 'temperature_celsius', help: 'Temperature', labelNames: ['room'], registers: [r] });
  const h = new Histogram({
    name: 'latency_seconds',
    help: 'Latency',
    labelNames: ['op'],
    buckets: [0.1, 1, 2.5],
    registers: [r],
  });
  const plain = new Counter({ name: 'restarts', help: 'Counter without _total', registers: [r] });
  return { r, c, g, h, plain };
}

describe('text format 0.0.4', () => {
  test('families are sorted, HELP/TYPE written and escaped, samples parse back to the recorded values', async () => {
    const { r, c, g, h, plain } = fixture();
    c.labels('a', 'q1').inc(3);
    c.labels('b', 'q1').inc(0.5);
    g.labels('kitchen').set(-2.5);
    h.labels('get').observe(0.05);
    h.labels('get').observe(2);
    h.labels('get').observe(7);
    plain.inc();
    const text = await (await r.collect()).text('text');

    const names = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(names, [
      'jobs_total counter',
      'latency_seconds histogram',
      'restarts counter',
      'temperature_celsius gauge',
    ]);
    assert.match(text, /^# HELP jobs_total Jobs "done"\\nper kind \\\\ queue$/m);

    const fams = parseExposition(text);
    assert.equal(fams.get('jobs_total')!.help, 'Jobs "done"\nper kind \\ queue');
    assert.equal(value(fams, 'jobs_total', { kind: 'a', queue: 'q1' }), 3);
    assert.equal(value(fams, 'jobs_total', { kind: 'b', queue: 'q1' }), 0.5);
    assert.equal(value(fams, 'temperature_celsius', { room: 'kitchen' }), -2.5);
    assert.equal(value(fams, 'restarts', {}), 1);
    assert.equal(value(fams, 'latency_seconds_count', { op: 'get' }), 3);
    assert.equal(value(fams, 'latency_seconds_sum', { op: 'get' }), 9.05);
    // cumulative buckets, `le` last, +Inf equals the count
    assert.match(text, /^latency_seconds_bucket\{op="get",le="0.1"\} 1$/m);
    assert.match(text, /^latency_seconds_bucket\{op="get",le="1"\} 1$/m);
    assert.match(text, /^latency_seconds_bucket\{op="get",le="2.5"\} 2$/m);
    assert.match(text, /^latency_seconds_bucket\{op="get",le="\+Inf"\} 3$/m);

    const lint = await promtoolCheck(text);
    // promtool lints only: the counter without `_total` is the one finding we put there on purpose
    assert.match(lint.output, /restarts counter metrics should have "_total" suffix/);
    assert.equal(lint.output.trim().split('\n').length, 1, lint.output);
  });

  test('promtool reports nothing for well-named families with awkward label values', async () => {
    const r = new Registry();
    const c = new Counter({ name: 'odd_total', help: 'x', labelNames: ['v'], registers: [r] });
    for (const v of ['', 'with "quotes"', 'back\\slash', 'new\nline', 'a,b=c', '{}', 'ünïcødé ✓', ' '])
      c.labels(v).inc();
    const text = await (await r.collect()).text('text');
    const lint = await promtoolCheck(text);
    assert.equal(lint.code, 0, lint.output);
    assert.equal(lint.output.trim(), '');
    assert.equal(parseExposition(text).get('odd_total')!.samples.length, 8);
  });

  test('labelled families without any series are left out; label-less ones show their zero', async () => {
    const r = new Registry();
    new Counter({ name: 'unused_total', help: 'x', labelNames: ['a'], registers: [r] });
    new Gauge({ name: 'idle', help: 'x', registers: [r] });
    const text = await (await r.collect()).text('text');
    assert.equal(text, '# HELP idle x\n# TYPE idle gauge\nidle 0\n');
  });

  test('remove() and reset() delete series', async () => {
    const r = new Registry();
    const g = new Gauge({ name: 'keys', help: 'x', labelNames: ['ns', 'name'], registers: [r] });
    g.labels('a', 'x').set(1);
    g.labels({ ns: 'b', name: 'y' }).set(2);
    assert.equal(g.remove('a', 'x'), true);
    assert.equal(g.remove('a', 'x'), false);
    let fams = parseExposition(await (await r.collect()).text());
    assert.deepEqual(
      fams.get('keys')!.samples.map((s) => s.labels),
      [{ ns: 'b', name: 'y' }],
    );
    g.labels('b', 'z').set(3);
    assert.equal(g.remove({ ns: 'b', name: 'y' }), true);
    assert.equal(g.labels('b', 'z').get(), 3, 'a sibling series survives the removal');
    g.labels('a', 'x').set(4);
    assert.equal(g.labels('a', 'x').get(), 4, 'a removed series can be created again');
    g.reset();
    fams = parseExposition(await (await r.collect()).text());
    assert.equal(fams.has('keys'), false);
  });

  test('number label values name the same series as their string form', () => {
    const c = new Counter({ name: 'codes_total', help: 'x', labelNames: ['code'], registers: [] });
    assert.equal(c.labels(200), c.labels('200'));
    assert.equal(c.labels({ code: 404 }), c.labels('404'));
  });
});

describe('OpenMetrics 1.0.0', () => {
  test('valid by the OpenMetrics rules: counters as <base>_total, a counter without _total as unknown, canonical le, # EOF last, same values as text', async () => {
    const { r, c, g, h, plain } = fixture();
    c.labels('a', 'q"1').inc(3);
    g.labels('hall').set(21);
    h.labels('put').observe(1);
    plain.inc(4);
    const snap = await r.collect();
    const om = await snap.text('openmetrics');
    const fams = parseOpenMetrics(om);
    assert.equal(fams.get('jobs')!.type, 'counter');
    assert.equal(fams.get('jobs')!.help, 'Jobs "done"\nper kind \\ queue');
    assert.deepEqual(fams.get('jobs')!.samples, [
      { name: 'jobs_total', labels: { kind: 'a', queue: 'q"1' }, value: 3 },
    ]);
    // client_golang (prometheus/common v0.67): no `_total` → TYPE unknown, the sample keeps its name, so the series is
    // `restarts` in both formats
    assert.equal(fams.get('restarts')!.type, 'unknown');
    assert.deepEqual(fams.get('restarts')!.samples, [{ name: 'restarts', labels: {}, value: 4 }]);
    assert.match(om, /^# TYPE restarts unknown\nrestarts 4$/m);
    assert.match(om, /^# HELP jobs Jobs \\"done\\"\\nper kind \\\\ queue$/m);
    assert.match(om, /^latency_seconds_bucket\{op="put",le="1.0"\} 1$/m);
    assert.match(om, /^latency_seconds_bucket\{op="put",le="0.1"\} 0$/m);
    assert.ok(om.endsWith('\n# EOF\n'));

    // the text rendering of the same snapshot is unchanged by an OpenMetrics render (prom-client 15 renames in place)
    const text = await snap.text('text');
    assert.match(text, /^restarts 4$/m);
    assert.match(text, /^jobs_total\{kind="a",queue="q\\"1"\} 3$/m);
    const again = await (await r.collect()).text('text');
    assert.equal(again, text);
  });

  test('an empty registry is just # EOF', async () => {
    assert.equal(await (await new Registry().collect()).text('openmetrics'), '# EOF\n');
  });
});

describe('numbers', () => {
  test('floats are written as Go strconv.FormatFloat(v, "g", -1, 64)', () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [1, '1'],
      [-3, '-3'],
      [42.5, '42.5'],
      [-42.5, '-42.5'],
      [999999.5, '999999.5'],
      [-0.00012345678901234, '-0.00012345678901234'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [1e-8, '1e-08'],
      [123456, '123456'],
      [999999, '999999'],
      [1e6, '1e+06'],
      [1234567, '1.234567e+06'],
      [2 ** 31, '2.147483648e+09'],
      [1e21, '1e+21'],
      [1.5e300, '1.5e+300'],
      [-2.5e-7, '-2.5e-07'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
      [NaN, 'NaN'],
      [0.1 + 0.2, '0.30000000000000004'],
    ];
    for (const [v, want] of cases) assert.equal(formatFloat(v), want, `formatFloat(${v})`);
  });

  test('bucket helpers', () => {
    assert.deepEqual(linearBuckets(1, 2, 3), [1, 3, 5]);
    assert.deepEqual(exponentialBuckets(1, 10, 4), [1, 10, 100, 1000]);
    // accumulated as client_golang does (b += width; b *= factor): these are Go's LinearBuckets(0.1, 0.1, 10) and
    // ExponentialBuckets(0.1, 3, 6), as written out by Go's strconv
    assert.deepEqual(linearBuckets(0.1, 0.1, 10).map(String), [
      '0.1',
      '0.2',
      '0.30000000000000004',
      '0.4',
      '0.5',
      '0.6',
      '0.7',
      '0.7999999999999999',
      '0.8999999999999999',
      '0.9999999999999999',
    ]);
    assert.deepEqual(exponentialBuckets(0.1, 3, 6).map(String), [
      '0.1',
      '0.30000000000000004',
      '0.9000000000000001',
      '2.7',
      '8.100000000000001',
      '24.300000000000004',
    ]);
    assert.throws(() => exponentialBuckets(0, 2, 3), RangeError);
    assert.throws(() => linearBuckets(1, 1, 0), RangeError);
  });
});

describe('metric classes', () => {
  test('histogram buckets are cumulative and +Inf/NaN observations land only in +Inf', async () => {
    const r = new Registry();
    const h = new Histogram({ name: 'h', help: 'x', buckets: [1, 2, 3], registers: [r] });
    for (const v of [0.5, 1, 1.5, 2, 3, 3.5, Infinity, NaN]) h.observe(v);
    const fams = parseExposition(await (await r.collect()).text());
    const buckets = fams
      .get('h')!
      .samples.filter((s) => s.name === 'h_bucket')
      .map((s) => [s.labels['le'], s.value]);
    assert.deepEqual(buckets, [
      ['1', 2],
      ['2', 4],
      ['3', 5],
      ['+Inf', 8],
    ]);
    assert.equal(value(fams, 'h_count', {}), 8);
  });

  test('children are pre-bound: the same child object for the same values, updates visible on the next collect', async () => {
    const r = new Registry();
    const c = new Counter({ name: 'c_total', help: 'x', labelNames: ['a', 'b'], registers: [r] });
    const child = c.labels('x', 'y');
    assert.equal(c.labels('x', 'y'), child);
    assert.equal(c.labels({ a: 'x', b: 'y' }), child);
    child.inc();
    child.inc(2);
    assert.equal(value(parseExposition(await (await r.collect()).text()), 'c_total', { a: 'x', b: 'y' }), 3);
  });

  test('gauge inc/dec/set/startTimer and counter guards', () => {
    const g = new Gauge({ name: 'g', help: 'x', registers: [] });
    g.inc(5);
    g.dec(2);
    assert.equal(g.get(), 3);
    const end = g.startTimer();
    const s = end();
    assert.ok(s >= 0 && g.get() === s);
    const c = new Counter({ name: 'c_total', help: 'x', registers: [] });
    assert.throws(() => c.inc(-1), RangeError);
    assert.throws(() => c.inc(NaN), RangeError);
    const lc = new Counter({ name: 'l_total', help: 'x', labelNames: ['a'], registers: [] });
    assert.throws(() => lc.inc(), /has labels \(a\): use \.labels/);
    assert.throws(() => lc.labels('1', '2'), /expected 1 label values/);
    // @ts-expect-error -- the label names are typed; a JavaScript caller gets the runtime refusal
    assert.throws(() => lc.labels({ b: '1' }), /unknown label "b"/);
  });

  test('invalid names, reserved labels and bad buckets are refused at construction', () => {
    // any non-empty UTF-8 text is a name (client_golang's UTF-8 validation); empty and lone surrogates are not
    assert.throws(() => new Counter({ name: '', help: 'x', registers: [] }), /invalid metric name/);
    assert.throws(() => new Counter({ name: 'bad\uD800name', help: 'x', registers: [] }), /invalid metric name/);
    assert.throws(
      () => new Counter({ name: 'ok', help: 'x', labelNames: ['__x'], registers: [] }),
      /invalid label name/,
    );
    assert.throws(() => new Counter({ name: 'ok', help: 'x', labelNames: [''], registers: [] }), /invalid label name/);
    assert.throws(
      () => new Counter({ name: 'ok', help: 'x', labelNames: ['a.b', 'a-b'], registers: [] }),
      /"a\.b" and "a-b" are both written "a_b"/,
    );
    assert.throws(() => new Histogram({ name: 'h', help: 'x', labelNames: ['le'], registers: [] }), /reserved/);
    assert.throws(() => new Histogram({ name: 'h', help: 'x', buckets: [2, 1], registers: [] }), /strictly increasing/);
    assert.throws(() => new Gauge({ name: 'g', help: '', registers: [] }), /help text is required/);
  });
});

describe('client_golang order', () => {
  test('labels are written sorted by name and series sorted by label values, whatever the declaration and creation order', async () => {
    const r = new Registry();
    const g = new Gauge({ name: 'workqueue_depth_x', help: 'x', labelNames: ['name', 'controller'], registers: [r] });
    g.labels('dq', 'b').set(1);
    g.labels('dq', 'a').set(2);
    g.labels('cq', 'b').set(3);
    const h = new Histogram({ name: 'h_seconds', help: 'x', labelNames: ['z', 'a'], buckets: [1], registers: [r] });
    h.labels('1', '2').observe(0.5);
    const text = await (await r.collect()).text();
    assert.equal(
      text
        .split('\n')
        .filter((l) => l.startsWith('workqueue_depth_x'))
        .join('\n'),
      [
        'workqueue_depth_x{controller="a",name="dq"} 2',
        'workqueue_depth_x{controller="b",name="cq"} 3',
        'workqueue_depth_x{controller="b",name="dq"} 1',
      ].join('\n'),
    );
    // le stays last, after the sorted labels
    assert.ok(text.includes('h_seconds_bucket{a="2",z="1",le="1"} 1\n'), text);
    assert.ok(text.includes('h_seconds_sum{a="2",z="1"} 0.5\n'), text);
    // a series added later is put in its place at the next collect
    g.labels('aa', 'a').set(4);
    const again = await (await r.collect()).text();
    assert.match(
      again,
      /workqueue_depth_x\{controller="a",name="aa"\} 4\nworkqueue_depth_x\{controller="a",name="dq"\} 2\n/,
    );
  });

  test("a prom-client metric's labels are written sorted by name too (prom-client keeps the order given)", async () => {
    const r = new Registry();
    const pc = new promClient.Gauge({ name: 'pc_depth', help: 'x', labelNames: ['name', 'controller'], registers: [] });
    pc.labels({ name: 'dq', controller: 'c' }).set(1);
    r.register(pc);
    assert.match(await (await r.collect()).text(), /^pc_depth\{controller="c",name="dq"\} 1$/m);
  });

  test('a bound series keeps counting across re-orderings (its storage moves when series are added or removed)', async () => {
    const r = new Registry();
    const c = new Counter({ name: 'moves_total', help: 'x', labelNames: ['k'], registers: [r] });
    const h = new Histogram({ name: 'moves_seconds', help: 'x', labelNames: ['k'], buckets: [1], registers: [r] });
    const bound = c.labels('m');
    const boundH = h.labels('m');
    for (let round = 0; round < 5; round++) {
      bound.inc();
      boundH.observe(0.5);
      c.labels(`a${round}`).inc(); // sorts before m: the order changes at the next collect
      h.labels(`z${round}`).observe(2);
      if (round === 2) c.remove('a0');
      await r.collect();
    }
    bound.inc(10);
    boundH.observe(3);
    const fams = parseExposition(await (await r.collect()).text());
    assert.equal(value(fams, 'moves_total', { k: 'm' }), 15);
    assert.equal(bound.get(), 15);
    assert.equal(value(fams, 'moves_seconds_count', { k: 'm' }), 6);
    assert.equal(value(fams, 'moves_seconds_bucket', { k: 'm', le: '1' }), 5);
    assert.equal(value(fams, 'moves_seconds_sum', { k: 'm' }), 5.5);
    assert.deepEqual(
      fams.get('moves_total')!.samples.map((x) => x.labels['k']),
      ['a1', 'a2', 'a3', 'a4', 'm'],
    );
  });

  test("series order is UTF-8 byte order (Go's), not UTF-16 code-unit order", async () => {
    const r = new Registry();
    const g = new Gauge({ name: 'u', help: 'x', labelNames: ['v'], registers: [r] });
    // U+FF21 (3 UTF-8 bytes, EF BC A1) sorts before U+1F600 (4 bytes, F0 9F 98 80) in Go; JavaScript's < says otherwise
    g.labels('\u{1F600}').set(1);
    g.labels('\uFF21').set(2);
    g.labels('a').set(3);
    const lines = (await (await r.collect()).text()).split('\n').filter((l) => l.startsWith('u{'));
    assert.deepEqual(lines, ['u{v="a"} 3', 'u{v="\uFF21"} 2', 'u{v="\u{1F600}"} 1']);
  });
});
