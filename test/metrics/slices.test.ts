/**
 * Rendering a large registry yields to the event loop between chunks (counted with setImmediate ticks, not timed)
 * and still produces every series exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';

function bigRegistry(series: number): Registry {
  const r = new Registry({ sliceLines: 4096 });
  const c = new Counter({ name: 'big_total', help: 'x', labelNames: ['id'], registers: [r] });
  for (let i = 0; i < series; i++) c.labels(String(i)).inc(i);
  const h = new Histogram({ name: 'big_seconds', help: 'x', labelNames: ['id'], buckets: [0.1, 1], registers: [r] });
  for (let i = 0; i < 100; i++) h.labels(String(i)).observe(0.5);
  return r;
}

for (const format of ['text', 'openmetrics'] as const) {
  test(`a 100k-series ${format} render lets the event loop run after every slice of lines`, async () => {
    const r = bigRegistry(100_000);
    const snap = await r.collect();
    let ticks = 0;
    let running = true;
    const tick = () => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const ticksAtChunk: number[] = [];
    const parts: Buffer[] = [];
    try {
      for await (const chunk of snap.chunks(format)) {
        assert.ok(Buffer.isBuffer(chunk));
        ticksAtChunk.push(ticks);
        parts.push(chunk);
      }
    } finally {
      running = false;
    }
    // chunks handed out within one turn of the loop together hold at most one slice (4096 lines + a histogram's 5)
    const linesPerTurn = new Map<number, number>();
    parts.forEach((chunk, i) => {
      let n = 0;
      for (let j = 0; j < chunk.length; j++) if (chunk[j] === 10) n++;
      linesPerTurn.set(ticksAtChunk[i], (linesPerTurn.get(ticksAtChunk[i]) ?? 0) + n);
    });
    assert.ok(linesPerTurn.size >= Math.floor(100_000 / 4096), `only ${linesPerTurn.size} turns of the loop`);
    for (const [tick, n] of linesPerTurn)
      assert.ok(n <= 4096 + 5 + 2, `${n} lines rendered without a turn of the loop (at tick ${tick})`);
    const text = Buffer.concat(parts).toString('utf8');
    const lines = text.split('\n').filter((l) => l.startsWith('big_total{'));
    assert.equal(lines.length, 100_000);
    assert.equal(new Set(lines).size, 100_000);
    assert.equal(lines[99_999], 'big_total{id="99999"} 99999');
    assert.equal(text.split('\n').filter((l) => l.startsWith('big_seconds_bucket')).length, 300);
    if (format === 'openmetrics') assert.ok(text.endsWith('# EOF\n'));
  });
}

test('chunks are bounded in lines and bytes; no chunk holds the whole body', async () => {
  const r = bigRegistry(20_000);
  const snap = await r.collect();
  let max = 0;
  let n = 0;
  for await (const chunk of snap.chunks('text')) {
    n++;
    assert.ok(chunk.length <= 64 * 1024, `a chunk of ${chunk.length} bytes`);
    let lines = 0;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    max = Math.max(max, lines);
  }
  assert.ok(n >= 5, `${n} chunks`);
  assert.ok(max <= 4096 + 16, `a chunk has ${max} lines`);
});
