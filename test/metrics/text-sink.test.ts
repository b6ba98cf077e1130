/** The byte sink the text formats are rendered into: numbers, UTF-8, blocks, and chunks that never change once taken. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TextSink } from '../../packages/ctrlmetrics/src/metrics/text-sink.js';

function written(write: (out: TextSink) => void, firstBlock?: number): string {
  const out = new TextSink(firstBlock);
  write(out);
  return Buffer.concat(out.take()).toString('utf8');
}

test('numbers are written as Go expfmt writes them (digits for small integers, Go float text for the rest)', () => {
  const cases: Array<[number, string]> = [
    [0, '0'],
    [-0, '0'],
    [7, '7'],
    [10, '10'],
    [-42, '-42'],
    [999_999, '999999'],
    [-999_999, '-999999'],
    [1_000_000, '1e+06'],
    [0.5, '0.5'],
    [-1.25, '-1.25'],
    [123456.5, '123456.5'],
    [0.00001, '1e-05'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ];
  for (const [v, want] of cases)
    assert.equal(
      written((o) => o.number(v)),
      want,
      `number(${v})`,
    );
});

test('text is UTF-8 whether ASCII, non-ASCII from any position, short or long', () => {
  const samples = [
    '',
    'a',
    'route="/é"',
    'é',
    'ab😀cd',
    'x'.repeat(255) + 'é',
    'y'.repeat(300) + '😀' + 'z'.repeat(10),
  ];
  for (const s of samples)
    assert.equal(
      written((o) => o.text(s)),
      s,
    );
  assert.equal(
    written((o) => samples.forEach((s) => o.text(s))),
    samples.join(''),
  );
});

test('writes across many blocks come out whole and in order', () => {
  let want = '';
  const got = written((o) => {
    for (let i = 0; i < 20_000; i++) {
      const label = i % 7 === 0 ? `{id="é${i}"} ` : `{id="${i}"} `;
      o.text('sample');
      o.text(label);
      o.number(i);
      o.byte(0x0a);
      want += `sample${label}${i}\n`;
    }
    o.text('w'.repeat(200_000)); // longer than a block: a block of its own
    want += 'w'.repeat(200_000);
  }, 100);
  assert.equal(got, want);
});

test('chunks taken are not changed by later writes, and each is at most one block unless one string was longer', () => {
  const out = new TextSink(64);
  out.text('first line\n');
  const first = out.take();
  assert.deepEqual(
    first.map((b) => b.toString()),
    ['first line\n'],
  );
  for (let i = 0; i < 10_000; i++) out.text('0123456789');
  const rest = out.take();
  assert.equal(first[0].toString(), 'first line\n');
  assert.equal(Buffer.concat(rest).toString(), '0123456789'.repeat(10_000));
  for (const b of rest) assert.ok(b.length <= 64 * 1024, `${b.length} bytes`);
  assert.deepEqual(out.take(), []);
});

test('a render written into leased blocks gives them back for the next render, and never more than the cap', async () => {
  const { BlockPool } = await import('../../packages/ctrlmetrics/src/metrics/text-sink.js');
  const { Counter, Registry } = await import('../../packages/ctrlmetrics/src/metrics/index.js');
  const r = new Registry();
  const c = new Counter({ name: 'pooled_total', help: 'x', labelNames: ['id'], registers: [r] });
  for (let i = 0; i < 5_000; i++) c.labels(String(i)).inc(i);
  const pool = new BlockPool(2);
  const render = async () => {
    const lease = pool.lease();
    const parts: Buffer[] = [];
    for await (const chunk of (await r.collect()).chunks('text', 'underscores', lease)) parts.push(chunk);
    const text = Buffer.concat(parts).toString();
    return { lease, text, buffers: new Set(parts.map((p) => p.buffer)) };
  };
  const first = await render();
  assert.ok(first.buffers.size > 2, `a 5k-line render spans ${first.buffers.size} blocks`);
  assert.equal(pool.idleBlocks, 0);
  first.lease.release();
  assert.equal(pool.idleBlocks, 2, 'the pool keeps at most its cap');
  const second = await render();
  const reused = [...second.buffers].filter((b) => first.buffers.has(b)).length;
  assert.equal(reused, 2, 'the next render writes into the blocks given back');
  assert.equal(second.text.split('\n').filter((l) => l.startsWith('pooled_total{')).length, 5_000);
  assert.match(second.text, /^pooled_total\{id="4999"\} 4999$/m);
});
