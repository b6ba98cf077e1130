// Series caps: a family with `maxSeries` keeps at most that many label-value combinations; a new one
// past it is refused — never exposed, its updates dropped, counted in ctrlmetrics_series_refused_total{metric} and
// logged once — while the existing series keep working; the built-in families whose labels users choose are capped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry, registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/util/log.js';
import {
  BUILTIN_MAX_SERIES,
  reconcileTotal,
  workqueueDepth,
} from '../../packages/ctrlmetrics/src/controller/metrics.js';
import { restClientRequests } from '../../packages/ctrlmetrics/src/metrics/builtin.js';
import { parseExposition } from '../../packages/cli/src/ops/exposition.js';

const refusedFor = async (metric: string) =>
  parseExposition(await (await registry.collect()).text('text')).find(
    (s) => s.name === 'ctrlmetrics_series_refused_total' && s.labels.metric === metric,
  )?.value ?? 0;

describe('maxSeries', () => {
  it('stops at the cap: a new combination is refused (not exposed, updates dropped), counted and logged once', async () => {
    const lines: string[] = [];
    const prev = setLogSink((l) => lines.push(l));
    try {
      const reg = new Registry();
      const hits = new Counter({
        name: 'capped_hits_total',
        help: 'h',
        labelNames: ['user'],
        maxSeries: 3,
        registers: [reg],
      });
      for (const u of ['a', 'b', 'c']) hits.labels(u).inc();
      const refused = hits.labels('d');
      refused.inc(5);
      hits.labels('e').inc();
      hits.labels('a').inc(); // existing series keep working
      const samples = parseExposition(await (await reg.collect()).text('text')).filter(
        (s) => s.name === 'capped_hits_total',
      );
      assert.deepEqual(
        samples.map((s) => [s.labels.user, s.value]),
        [
          ['a', 2],
          ['b', 1],
          ['c', 1],
        ],
      );
      assert.equal(hits.refusedSeries, 2);
      assert.equal(await refusedFor('capped_hits_total'), 2);
      const warned = lines.filter((l) => l.includes('capped_hits_total reached its limit of 3 series'));
      assert.equal(warned.length, 1, 'logged once, not per refusal');
      // a removed series frees its place
      assert.equal(hits.remove('b'), true);
      hits.labels('d').inc(7);
      const after = parseExposition(await (await reg.collect()).text('text')).filter(
        (s) => s.name === 'capped_hits_total',
      );
      assert.deepEqual(
        after.map((s) => [s.labels.user, s.value]),
        [
          ['a', 2],
          ['c', 1],
          ['d', 7],
        ],
      );
    } finally {
      setLogSink(prev);
    }
  });

  it('histograms too; a bad cap is refused at construction', async () => {
    const reg = new Registry();
    const h = new Histogram({
      name: 'capped_seconds',
      help: 'h',
      labelNames: ['path'],
      buckets: [1],
      maxSeries: 1,
      registers: [reg],
    });
    h.labels('/a').observe(0.5);
    h.labels('/b').observe(0.5);
    const text = await (await reg.collect()).text('text');
    assert.match(text, /capped_seconds_count\{path="\/a"\} 1/);
    assert.doesNotMatch(text, /path="\/b"/);
    assert.throws(
      () => new Counter({ name: 'bad_cap_total', help: 'h', labelNames: ['x'], maxSeries: 0, registers: [] }),
      /maxSeries must be a positive integer/,
    );
  });

  it('the built-in families whose label values users choose are capped', () => {
    assert.equal(BUILTIN_MAX_SERIES, 10_000);
    assert.equal(reconcileTotal.maxSeries, BUILTIN_MAX_SERIES);
    assert.equal(workqueueDepth.maxSeries, BUILTIN_MAX_SERIES);
    assert.equal(restClientRequests.maxSeries, 1000);
  });
});
