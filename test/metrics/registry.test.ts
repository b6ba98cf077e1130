/**
 * The global registry: prom-client's default registry merged in, duplicate names refused, collector errors and
 * hangs turned into a rejected collect (the /metrics handler answers 500 with that message).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as promClient from 'prom-client';
import {
  Counter,
  DuplicateMetricError,
  Gauge,
  Histogram,
  MetricsCollectError,
  Registry,
  mustRegister,
  register,
  registry,
  unregister,
  type Collector,
} from '../../src/metrics/index.js';
import { parseExposition, promtoolCheck, value } from '../controller/helpers/exposition.js';
import { parseOpenMetrics } from './openmetrics-parser.js';

describe('global registry', () => {
  test('a metric made with prom-client\'s own API appears with no wiring, in both formats', async () => {
    const widgets = new promClient.Counter({ name: 'regtest_widgets_total', help: 'Widgets made', labelNames: ['color'] });
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
    assert.deepEqual(om.get('regtest_widgets')!.samples, [{ name: 'regtest_widgets_total', labels: { color: 'red' }, value: 2 }]);
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
    assert.deepEqual(text.get('regtest_odd')!.samples.map((s) => [s.labels['v'], s.value]), values.map((v, i) => [v, i]));
    const om = parseOpenMetrics(await snap.text('openmetrics'));
    assert.deepEqual(om.get('regtest_odd')!.samples.map((s) => [s.labels['v'], s.value]), values.map((v, i) => [v, i]));
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

  test('a prom-client metric created after ours with the same name fails the collect with a clear error', async () => {
    const ours = new Gauge({ name: 'regtest_clash', help: 'x' });
    const theirs = new promClient.Gauge({ name: 'regtest_clash', help: 'x' });
    theirs.set(1);
    ours.set(2);
    await assert.rejects(registry.collect(), (err: Error) => {
      assert.ok(err instanceof MetricsCollectError);
      assert.match(err.message, /metric family regtest_clash is produced twice/);
      return true;
    });
    promClient.register.removeSingleMetric('regtest_clash');
    unregister(ours);
    await registry.collect();
  });

  test('the built-in runtime families step aside when the user calls collectDefaultMetrics() on prom-client', async () => {
    const before = parseExposition(await (await registry.collect()).text());
    assert.ok(before.has('process_cpu_seconds_total'));
    promClient.collectDefaultMetrics({ labels: { source: 'user' } });
    const after = parseExposition(await (await registry.collect()).text());
    assert.equal(after.get('process_cpu_seconds_total')!.samples.length, 1);
    assert.equal(after.get('process_cpu_seconds_total')!.samples[0]!.labels['source'], 'user');
    promClient.register.clear();
  });
});

describe('collect errors', () => {
  test('a throwing collect callback rejects the collect, naming the metric', async () => {
    const r = new Registry();
    new Gauge({ name: 'broken', help: 'x', registers: [r], collect: () => { throw new Error('sensor offline'); } });
    new Gauge({ name: 'fine', help: 'x', registers: [r] });
    await assert.rejects(r.collect(), { name: 'MetricsCollectError', message: 'collecting metric broken: sensor offline' });
  });

  test('two failing collectors are both reported', async () => {
    const r = new Registry();
    const failing = (name: string): Collector => ({ familyNames: () => [name], collect: async () => { throw new Error(`${name} down`); } });
    r.mustRegister(failing('one'), failing('two'));
    await assert.rejects(r.collect(), /2 errors occurred while collecting metrics:\n\* metric one: one down\n\* metric two: two down/);
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

  test('families whose sample names would collide fail the collect, naming both', async () => {
    const r = new Registry();
    new Histogram({ name: 'lat', help: 'x', registers: [r] });
    const g = new Gauge({ name: 'lat_count', help: 'x', registers: [r] });
    await assert.rejects(r.collect(), /metric family lat_count collides with the _count samples of histogram lat/);
    r.unregister(g);
    await r.collect();
    new Counter({ name: 'jobs', help: 'x', registers: [r] });
    new Counter({ name: 'jobs_total', help: 'x', registers: [r] });
    await assert.rejects(r.collect(), /metric families jobs and jobs_total have the same OpenMetrics name jobs/);
  });

  test('async collect callbacks run on every collect, before values are read', async () => {
    const r = new Registry();
    let n = 0;
    const g: Gauge = new Gauge({ name: 'sampled', help: 'x', registers: [r], collect: async () => { await new Promise((res) => setImmediate(res)); g.set(++n); } });
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
    assert.throws(() => r.mustRegister(new Histogram({ name: 'lone_seconds', help: 'x', registers: [] })), DuplicateMetricError);
    const fams = parseExposition(await (await r.collect()).text());
    assert.equal(value(fams, 'in_prom_registry_total', {}), 3);
    assert.equal(value(fams, 'lone_seconds_bucket', { le: '1' }), 1);
  });
});
