/**
 * The global registry: prom-client's default registry merged in, duplicate names refused, collector errors and
 * hangs turned into a rejected collect (the /metrics handler answers 500 with that message).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as promClient from 'prom-client';
import v8 from 'node:v8';
import { LogCapture } from '../helpers/log-capture.js';
import { runInNewContext } from 'node:vm';
import {
  Counter,
  DuplicateMetricError,
  Gauge,
  Histogram,
  Registry,
  mustRegister,
  register,
  registry,
  unregister,
  type Collector,
} from '../../packages/ctrlmetrics/src/metrics/index.js';
import { parseExposition, promtoolCheck, value } from '../controller/helpers/exposition.js';
import { parseOpenMetrics } from './openmetrics-parser.js';

describe('global registry', () => {
  test("a metric made with prom-client's own API appears with no wiring, in both formats", async () => {
    const widgets = new promClient.Counter({
      name: 'regtest_widgets_total',
      help: 'Widgets made',
      labelNames: ['color'],
    });
    const temp = new promClient.Gauge({ name: 'regtest_temp', help: 'Temp' });
    const sizes = new promClient.Histogram({ name: 'regtest_size_bytes', help: 'Sizes', buckets: [10, 100] });
    widgets.inc({ color: 'red' }, 2);
    temp.set(1.5);
    sizes.observe(50);
    const snap = await registry.collect();
    const fams = parseExposition(await snap.text('text'));
    assert.equal(value(fams, 'regtest_widgets_total', { color: 'red' }), 2);
    assert.equal(value(fams, 'regtest_temp', {}), 1.5);
    assert.equal(value(fams, 'regtest_size_bytes_bucket', { le: '100' }), 1);
    assert.equal(fams.get('regtest_size_bytes')!.type, 'histogram');
    const om = parseOpenMetrics(await snap.text('openmetrics'));
    assert.deepEqual(om.get('regtest_widgets')!.samples, [
      { name: 'regtest_widgets_total', labels: { color: 'red' }, value: 2 },
    ]);
    assert.deepEqual(om.get('regtest_size_bytes')!.samples.find((s) => s.labels['le'] === '100.0')?.value, 1);
    // prom-client's own text rendering still has the _total name afterwards (we never render through it)
    assert.match(await promClient.register.metrics(), /^regtest_widgets_total\{color="red"\} 2$/m);
  });

  test('label values and HELP of prom-client metrics are escaped by our renderer in both formats', async () => {
    const odd = new promClient.Gauge({ name: 'regtest_odd', help: 'back\\slash "q"\nnext', labelNames: ['v'] });
    const values = ['say "hi"', 'C:\\dir', 'two\nlines', 'a,b=c'];
    values.forEach((v, i) => odd.set({ v }, i));
    const snap = await registry.collect();
    const text = parseExposition(await snap.text('text'));
    assert.equal(text.get('regtest_odd')!.help, 'back\\slash "q"\nnext');
    assert.deepEqual(
      text.get('regtest_odd')!.samples.map((s) => [s.labels['v'], s.value]),
      values.map((v, i) => [v, i]),
    );
    const om = parseOpenMetrics(await snap.text('openmetrics'));
    assert.deepEqual(
      om.get('regtest_odd')!.samples.map((s) => [s.labels['v'], s.value]),
      values.map((v, i) => [v, i]),
    );
    promClient.register.removeSingleMetric('regtest_odd');
  });

  test('the whole global exposition passes promtool with no findings', async () => {
    const c = new Counter({ name: 'regtest_lint_total', help: 'x', labelNames: ['a'] });
    c.labels('1').inc();
    const text = await (await registry.collect()).text('text');
    const lint = await promtoolCheck(text);
    assert.equal(lint.code, 0, lint.output);
    assert.equal(lint.output.trim(), '');
    assert.doesNotMatch(text, /nodejs_active_\w+_total/);
    unregister(c);
  });

  test('mustRegister throws on a duplicate name, a second registration, and a name taken in prom-client', () => {
    const a = new Counter({ name: 'regtest_dup_total', help: 'x', registers: [] });
    const b = new Counter({ name: 'regtest_dup_total', help: 'y', registers: [] });
    mustRegister(a);
    assert.throws(() => mustRegister(a), DuplicateMetricError);
    assert.throws(() => mustRegister(b), /already registered/);
    register(a); // the very same collector again: a no-op
    assert.throws(() => new Counter({ name: 'regtest_dup_total', help: 'z' }), DuplicateMetricError);
    new promClient.Gauge({ name: 'regtest_prom_taken', help: 'x' });
    assert.throws(() => new Gauge({ name: 'regtest_prom_taken', help: 'x' }), /prom-client's default registry/);
    assert.equal(unregister(a), true);
    mustRegister(b);
    unregister(b);
  });

  test('a prom-client metric created after ours with the same name is left out and logged once; /metrics keeps serving ours', async () => {
    const logs = new LogCapture();
    try {
      const ours = new Gauge({ name: 'regtest_clash', help: 'x' });
      const theirs = new promClient.Gauge({ name: 'regtest_clash', help: 'x' });
      theirs.set(1);
      ours.set(2);
      for (let i = 0; i < 3; i++) assert.match(await (await registry.collect()).text(), /^regtest_clash 2$/m);
      const logged = logs.lines.filter((l) => l.includes('left out of /metrics'));
      assert.equal(logged.length, 1, logs.lines.join('\n'));
      assert.match(logged[0], /"level":"error"/);
      assert.match(logged[0], /gauge regtest_clash \(prom-client's default registry\)/);
      assert.match(logged[0], /gauge regtest_clash \(metric regtest_clash\)/);
      promClient.register.removeSingleMetric('regtest_clash');
      unregister(ours);
    } finally {
      logs.restore();
    }
  });

  test('the built-in runtime families step aside when the user calls collectDefaultMetrics() on prom-client', async () => {
    const before = parseExposition(await (await registry.collect()).text());
    assert.ok(before.has('process_cpu_seconds_total'));
    promClient.collectDefaultMetrics({ labels: { source: 'user' } });
    const after = parseExposition(await (await registry.collect()).text());
    assert.equal(after.get('process_cpu_seconds_total')!.samples.length, 1);
    assert.equal(after.get('process_cpu_seconds_total')!.samples[0].labels['source'], 'user');
    promClient.register.clear();
  });
});

describe('collect errors', () => {
  test('a throwing collect callback rejects the collect, naming the metric', async () => {
    const r = new Registry();
    new Gauge({
      name: 'broken',
      help: 'x',
      registers: [r],
      collect: () => {
        throw new Error('sensor offline');
      },
    });
    new Gauge({ name: 'fine', help: 'x', registers: [r] });
    await assert.rejects(r.collect(), {
      name: 'MetricsCollectError',
      message: 'collecting metric broken: sensor offline',
    });
  });

  test('two failing collectors are both reported', async () => {
    const r = new Registry();
    const failing = (name: string): Collector => ({
      familyNames: () => [name],
      collect: async () => {
        throw new Error(`${name} down`);
      },
    });
    r.mustRegister(failing('one'), failing('two'));
    await assert.rejects(
      r.collect(),
      /2 errors occurred while collecting metrics:\n\* metric one: one down\n\* metric two: two down/,
    );
  });

  test('a hanging collector rejects after the deadline; the next collect works once it is gone', async () => {
    const r = new Registry();
    const hang: Collector = { familyNames: () => ['stuck'], collect: () => new Promise(() => undefined) };
    r.mustRegister(hang);
    new Counter({ name: 'ok_total', help: 'x', registers: [r] }).inc();
    await assert.rejects(r.collect({ timeoutMs: 50 }), /timed out after 50 ms; still running: metric stuck/);
    r.unregister(hang);
    assert.match(await (await r.collect({ timeoutMs: 50 })).text(), /^ok_total 1$/m);
  });

  test('scrapes that overlap a pending collect share it; one that outlived the deadline is abandoned and the collector called anew', async () => {
    const r = new Registry();
    let calls = 0;
    let release: (() => void) | undefined;
    const slow: Collector = {
      familyNames: () => ['slow'],
      collect: () => {
        calls++;
        return new Promise<[]>((res) => (release = () => res([])));
      },
    };
    r.mustRegister(slow);
    const overlapping = Array.from({ length: 5 }, () =>
      assert.rejects(r.collect({ timeoutMs: 100 }), /still running: metric slow/),
    );
    await Promise.all(overlapping);
    assert.equal(calls, 1, 'five overlapping scrapes, one call');
    // the pending call is older than this collect's deadline: abandoned, the collector is called again
    await new Promise((res) => setTimeout(res, 30));
    const next = r.collect({ timeoutMs: 100 });
    await new Promise((res) => setImmediate(res));
    assert.equal(calls, 2);
    release!();
    await next;
    // a collect within the deadline of a settled one calls anew too (nothing is pending)
    const third = r.collect({ timeoutMs: 1000 });
    await new Promise((res) => setImmediate(res));
    release!();
    await third;
    assert.equal(calls, 3);
  });

  test('remove() drops the series at once: nothing of it stays reachable until a scrape', async () => {
    const g = new Gauge({ name: 'churn', help: 'x', labelNames: ['id'], registers: [] });
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 1000; i++) {
      refs.push(new WeakRef(g.labels(String(i))));
      g.remove(String(i));
    }
    await new Promise((res) => setImmediate(res));
    // a full GC on demand, without starting node with --expose-gc
    v8.setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    assert.equal(refs.filter((r) => r.deref()).length, 0, 'every removed series collected');
    assert.equal(g.view().units, 0);
  });

  test("registration refuses a family whose samples would collide with another's, in either format", () => {
    const r = new Registry();
    new Histogram({ name: 'lat', help: 'x', registers: [r] });
    for (const suffix of ['_count', '_sum', '_bucket']) {
      assert.throws(
        () => new Gauge({ name: `lat${suffix}`, help: 'x', registers: [r] }),
        new RegExp(`metric lat${suffix} \\(gauge\\) collides with the registered lat: both would write lat${suffix}`),
      );
    }
    new Gauge({ name: 'req_count', help: 'x', registers: [r] });
    assert.throws(
      () => new Histogram({ name: 'req', help: 'x', registers: [r] }),
      /metric req \(histogram\) collides with the registered req_count/,
    );
    // a counter x_total is family x in OpenMetrics: a gauge or counter x would be a second family x
    new Counter({ name: 'jobs_total', help: 'x', registers: [r] });
    assert.throws(() => new Gauge({ name: 'jobs', help: 'x', registers: [r] }), /both would write jobs;/);
    assert.throws(() => new Counter({ name: 'jobs', help: 'x', registers: [r] }), /both would write jobs;/);
    // a counter without _total writes its own name in both formats: a gauge x_total beside it is fine
    new Counter({ name: 'restarts', help: 'x', registers: [r] });
    new Gauge({ name: 'restarts_total', help: 'x', registers: [r] });
    // against prom-client metrics of an included registry too
    const pr = new promClient.Registry();
    new promClient.Histogram({ name: 'pc_lat', help: 'x', registers: [pr] });
    r.mustRegister(pr);
    assert.throws(
      () => new Gauge({ name: 'pc_lat_sum', help: 'x', registers: [r] }),
      /collides with the registered pc_lat/,
    );
  });

  test('families that collide only at collect time: the first registered is served, the other left out', async () => {
    const r = new Registry();
    const logs = new LogCapture();
    try {
      new Histogram({ name: 'lat', help: 'x', registers: [r] }).observe(1);
      // a prom-client registry included while empty; a metric created in it later through prom-client's API is
      // seen only by a collect
      const pr = new promClient.Registry();
      r.mustRegister(pr);
      new promClient.Gauge({ name: 'lat_count', help: 'x', registers: [pr] }).set(5);
      const text = await (await r.collect()).text();
      assert.match(text, /^lat_count 1$/m, "the histogram's own _count");
      assert.doesNotMatch(text, /TYPE lat_count gauge/);
      assert.equal(
        logs.lines.filter((l) => l.includes('left out of /metrics') && l.includes('gauge lat_count')).length,
        1,
      );
    } finally {
      logs.restore();
    }
  });

  test('async collect callbacks run on every collect, before values are read', async () => {
    const r = new Registry();
    let n = 0;
    const g: Gauge = new Gauge({
      name: 'sampled',
      help: 'x',
      registers: [r],
      collect: async () => {
        await new Promise((res) => setImmediate(res));
        g.set(++n);
      },
    });
    assert.match(await (await r.collect()).text(), /^sampled 1$/m);
    assert.match(await (await r.collect()).text(), /^sampled 2$/m);
  });

  test('prom-client metrics and registries can be registered in a registry of ours', async () => {
    const pr = new promClient.Registry();
    new promClient.Counter({ name: 'in_prom_registry_total', help: 'x', registers: [pr] }).inc(3);
    const lone = new promClient.Histogram({ name: 'lone_seconds', help: 'x', buckets: [1], registers: [] });
    lone.observe(0.5);
    const r = new Registry();
    r.mustRegister(pr, lone);
    assert.throws(
      () => r.mustRegister(new Histogram({ name: 'lone_seconds', help: 'x', registers: [] })),
      DuplicateMetricError,
    );
    const fams = parseExposition(await (await r.collect()).text());
    assert.equal(value(fams, 'in_prom_registry_total', {}), 3);
    assert.equal(value(fams, 'lone_seconds_bucket', { le: '1' }), 1);
  });
});

describe('scrape after scrape (views and merges are kept while nothing changes)', () => {
  const lines = async (r: Registry) =>
    (await (await r.collect()).text()).split('\n').filter((l) => l && !l.startsWith('#'));

  test('series added, removed and reset, and families registered and unregistered, show in the very next collect', async () => {
    const r = new Registry();
    const c = new Counter({ name: 'steps_total', help: 'x', labelNames: ['k'], registers: [r] });
    const g = new Gauge({ name: 'level', help: 'x', registers: [r] });
    c.labels('a').inc();
    g.set(1);
    assert.deepEqual(await lines(r), ['level 1', 'steps_total{k="a"} 1']);
    assert.deepEqual(await lines(r), ['level 1', 'steps_total{k="a"} 1'], 'unchanged');
    c.labels('b').inc(2);
    g.set(5);
    assert.deepEqual(
      await lines(r),
      ['level 5', 'steps_total{k="a"} 1', 'steps_total{k="b"} 2'],
      'a series added, a value changed',
    );
    c.remove('a');
    assert.deepEqual(await lines(r), ['level 5', 'steps_total{k="b"} 2'], 'a series removed');
    g.reset();
    c.reset();
    assert.deepEqual(await lines(r), ['level 0'], 'both reset');
    const h = new Histogram({ name: 'latency_seconds', help: 'x', buckets: [1], registers: [r] });
    h.observe(0.5);
    assert.deepEqual(
      await lines(r),
      [
        'latency_seconds_bucket{le="1"} 1',
        'latency_seconds_bucket{le="+Inf"} 1',
        'latency_seconds_sum 0.5',
        'latency_seconds_count 1',
        'level 0',
      ],
      'a family registered',
    );
    r.unregister(g);
    assert.deepEqual(
      await lines(r),
      [
        'latency_seconds_bucket{le="1"} 1',
        'latency_seconds_bucket{le="+Inf"} 1',
        'latency_seconds_sum 0.5',
        'latency_seconds_count 1',
      ],
      'a family unregistered',
    );
  });

  test('a synchronous collect callback that throws rejects that collect only; an async collector is still awaited', async () => {
    const r = new Registry();
    let fail = false;
    const g = new Gauge({
      name: 'sampled',
      help: 'x',
      registers: [r],
      collect: () => {
        if (fail) throw new Error('sensor gone');
        g.set(3);
      },
    });
    const inner = new Gauge({ name: 'slow', help: 'x', registers: [] });
    inner.set(3);
    const slow: Collector = {
      familyNames: () => ['slow'],
      collect: async () => (await new Promise((ok) => setTimeout(ok, 5)), [inner.view()]),
    };
    r.register(slow);
    assert.deepEqual(await lines(r), ['sampled 3', 'slow 3']);
    fail = true;
    await assert.rejects(r.collect(), /sampled: sensor gone/);
    fail = false;
    assert.deepEqual(await lines(r), ['sampled 3', 'slow 3']);
  });
});
