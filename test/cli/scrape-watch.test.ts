// The model and rendering of `scrape --watch`: rates and error ratios across a counter reset (a manager
// restart), p50/p90 from bucket deltas, the last minute's sparkline, and a screen that fits any terminal size.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  WatchHistory,
  fit,
  renderLines,
  renderScreen,
  sparkline,
  statsBetween,
  watchPoint,
} from '../../packages/cli/src/ops/scrape-watch.js';

/** An exposition of one controller's reconcile metrics (buckets 0.01, 0.1, +Inf), written by hand. */
function exposition(c: string, total: number, errors: number, buckets: [number, number, number], depth = 0): string {
  return [
    `controller_runtime_reconcile_total{controller="${c}",result="success"} ${total - errors}`,
    `controller_runtime_reconcile_total{controller="${c}",result="error"} ${errors}`,
    `controller_runtime_reconcile_errors_total{controller="${c}"} ${errors}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="${c}",le="0.01"} ${buckets[0]}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="${c}",le="0.1"} ${buckets[1]}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="${c}",le="+Inf"} ${buckets[2]}`,
    `workqueue_depth{controller="${c}",name="${c}"} ${depth}`,
    '',
  ].join('\n');
}

describe('scrape --watch: the numbers', () => {
  it('rate, error ratio and quantiles come from the deltas between two scrapes', () => {
    const a = watchPoint(exposition('web', 100, 10, [50, 90, 100]), 0);
    const b = watchPoint(exposition('web', 200, 35, [50, 190, 200], 4), 10_000);
    const [s] = statsBetween(b, a);
    assert.equal(s.rate, 10); // 100 reconciles in 10 s
    assert.equal(s.errorRatio, 0.25); // 25 of 100 failed
    // all 100 new observations fell in (0.01, 0.1]: p50 is halfway, p90 at nine tenths (linear interpolation)
    assert.ok(Math.abs(s.p50! - 0.055) < 1e-12, String(s.p50));
    assert.ok(Math.abs(s.p90! - 0.091) < 1e-12, String(s.p90));
    assert.equal(s.depth, 4);
    assert.equal(s.total, 200);
    assert.deepEqual(statsBetween(a), [{ controller: 'web', depth: 0, total: 100 }], 'the first scrape has no rates');
  });

  it("a counter that went down (the manager restarted) counts from zero, as Prometheus' rate()", () => {
    const before = watchPoint(exposition('web', 500, 50, [400, 480, 500]), 0);
    const restarted = watchPoint(exposition('web', 20, 0, [20, 20, 20]), 5_000);
    const [s] = statsBetween(restarted, before);
    assert.equal(s.rate, 4);
    assert.equal(s.errorRatio, 0);
    assert.ok(s.p90! > 0 && s.p90! <= 0.01, 'the reset histogram is read whole');
  });

  it('an interval without reconciles has no error ratio or quantiles', () => {
    const a = watchPoint(exposition('web', 10, 1, [10, 10, 10]), 0);
    const [s] = statsBetween(watchPoint(exposition('web', 10, 1, [10, 10, 10]), 1000), a);
    assert.deepEqual([s.rate, s.errorRatio, s.p50, s.p90], [0, undefined, undefined, undefined]);
  });

  it('the sparkline scales to the largest rate; the history keeps the last minute', () => {
    assert.equal(sparkline([0, 1, 2, 4, 7]), '▁▂▃▅█');
    assert.equal(sparkline([0, 0]), '▁▁');
    const h = new WatchHistory();
    for (let i = 0; i <= 90; i++) h.add(watchPoint(exposition('web', i * i, 0, [0, 0, i * i]), i * 1000));
    const rates = h.rates('web');
    assert.equal(rates.length, 60, 'one rate per interval of the last minute');
    assert.equal(rates[rates.length - 1], 90 * 90 - 89 * 89);
  });
});

describe('scrape --watch: the screen', () => {
  const history = () => {
    const h = new WatchHistory();
    for (let i = 0; i < 12; i++) {
      h.add(
        watchPoint(
          exposition('configmap', i * 10, i, [i * 5, i * 9, i * 10], 3) +
            exposition('a-controller-with-a-rather-long-name', i * 2, 0, [i, i * 2, i * 2]),
          i * 5000,
        ),
      );
    }
    return h;
  };

  it('a wide terminal shows every column and a sparkline of the last minute', () => {
    const lines = renderScreen(history(), {
      url: 'https://127.0.0.1:8443/metrics',
      intervalMs: 5000,
      columns: 120,
      rows: 20,
    });
    assert.match(lines[0], /^https:\/\/127\.0\.0\.1:8443\/metrics {2}every 5s {2}\d\d:\d\d:\d\dZ$/);
    assert.match(lines[2], /^CONTROLLER +RECONCILES\/S +ERRORS +P50 +P90 +DEPTH +LAST MINUTE$/);
    const row = lines.find((l) => l.startsWith('configmap '))!;
    assert.match(row, /^configmap +2\.00 +10\.0% +\S+ +\S+ +3 +[▁-█]{11}$/);
    for (const l of lines) assert.ok([...l].length <= 120, l);
  });

  it('a narrow terminal drops the sparkline, then shortens controller names; nothing is wider than the terminal', () => {
    for (const columns of [80, 60, 50, 30, 20]) {
      const lines = renderScreen(history(), {
        url: 'https://metrics.example.com:8443/metrics',
        intervalMs: 5000,
        columns,
        rows: 20,
      });
      for (const l of lines) assert.ok([...l].length <= columns, `${columns} columns: ${JSON.stringify(l)}`);
      if (columns <= 60) assert.doesNotMatch(lines.join('\n'), /LAST MINUTE/);
    }
    const narrow = renderScreen(history(), { url: 'u', intervalMs: 5000, columns: 60, rows: 20 });
    assert.ok(
      narrow.some((l) => /^a-control\S*… /.test(l)),
      narrow.join('\n'),
    );
  });

  it('a short terminal says how many controllers it hides; a stale table says since when', () => {
    const lines = renderScreen(history(), { url: 'u', intervalMs: 5000, columns: 100, rows: 4 });
    assert.equal(lines.length, 4);
    assert.equal(lines[3], '… 2 more controllers (make the terminal taller)');
    const stale = renderScreen(history(), {
      url: 'u',
      intervalMs: 5000,
      columns: 100,
      rows: 20,
      staleSince: Date.parse('2026-11-27T08:00:03Z'),
    });
    assert.match(stale[0], /last scrape \d\d:\d\d:\d\dZ, not answering since 08:00:03Z$/);
    assert.deepEqual(renderScreen(new WatchHistory(), { url: 'u', intervalMs: 1000, columns: 100, rows: 20 }), [
      'u  every 1s  waiting for the first scrape',
      '',
    ]);
  });

  it('plain lines: one per controller per scrape', () => {
    const h = history();
    const lines = renderLines(Date.parse('2026-11-27T08:00:05Z'), h.latest());
    assert.deepEqual(
      lines.map((l) => l.split(' ').slice(0, 3).join(' ')),
      ['08:00:05Z a-controller-with-a-rather-long-name reconciles/s=0.40', '08:00:05Z configmap reconciles/s=2.00'],
    );
    assert.match(lines[1], / errors=10\.0% p50=\S+ p90=\S+ depth=3 total=110$/);
    assert.equal(fit('abcdef', 4), 'abc…');
  });
});
