/**
 * Property: any label values (with `"`, `\`, newline, `,`, `=`, `{`, `}` and non-ASCII) stay distinct series and
 * round-trip through independent parsers of both formats. prom-client 15 merges `{a:"1,b:2"}` with
 * `{a:"1",b:"2"}`; our classes must not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as promClient from 'prom-client';
import { LogCapture } from '../helpers/log-capture.js';
import { Counter, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { parseExposition, promtoolCheck } from '../controller/helpers/exposition.js';
import { parseOpenMetrics } from './openmetrics-parser.js';
import { propertyParams } from '../helpers/property.js';

const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', '\n', ',', '=', ':', '{', '}', ' ', 'a', 'b', '1', '2', 'é', '✓', '😀'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});

test('the prom-client 15 collision case stays two series', async () => {
  const r = new Registry();
  const c = new Counter({ name: 't_total', help: 'x', labelNames: ['a', 'b'], registers: [r] });
  c.labels({ a: '1,b:2', b: '' }).inc();
  c.labels({ a: '1', b: '2' }).inc();
  c.labels('1,b:2', '').inc();
  const text = await (await r.collect()).text();
  const samples = parseExposition(text).get('t_total')!.samples;
  // series sorted by label values, as client_golang writes them: "1" before "1,b:2"
  assert.deepEqual(
    samples.map((s) => [s.labels, s.value]),
    [
      [{ a: '1', b: '2' }, 1],
      [{ a: '1,b:2', b: '' }, 2],
    ],
  );
  const lint = await promtoolCheck(text);
  assert.equal(lint.code, 0, lint.output);
});

test('property: label values round-trip through the text and OpenMetrics parsers, one series per distinct tuple', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(tricky, tricky), { minLength: 1, maxLength: 20 }), async (tuples) => {
      const r = new Registry();
      const c = new Counter({
        name: 'p_total',
        help: 'help with "quotes", \\ and\nnewline',
        labelNames: ['x', 'y'],
        registers: [r],
      });
      const expected = new Map<string, number>();
      for (const [x, y] of tuples) {
        c.labels(x, y).inc();
        const k = JSON.stringify([x, y]);
        expected.set(k, (expected.get(k) ?? 0) + 1);
      }
      const snap = await r.collect();
      const fromText = parseExposition(await snap.text('text')).get('p_total')!;
      assert.equal(fromText.help, 'help with "quotes", \\ and\nnewline');
      const fromOm = parseOpenMetrics(await snap.text('openmetrics')).get('p')!;
      for (const samples of [fromText.samples, fromOm.samples]) {
        const got = new Map(samples.map((s) => [JSON.stringify([s.labels['x'], s.labels['y']]), s.value]));
        assert.equal(samples.length, expected.size);
        assert.deepEqual(got, expected);
      }
    }),
    propertyParams(200),
  );
});

test('a label value with a lone UTF-16 surrogate is refused (no UTF-8 form: it would merge with U+FFFD), a surrogate pair is fine', async () => {
  const r = new Registry();
  const c = new Counter({ name: 'u_total', help: 'x', labelNames: ['v', 'w'], registers: [r] });
  for (const bad of ['\uD800', 'a\uDC00b', '\uDE00\uD83D']) {
    assert.throws(
      () => c.labels(bad, 'ok'),
      (err: Error) => err instanceof TypeError && /label v is not valid UTF-8/.test(err.message),
    );
    assert.throws(() => c.labels({ v: 'ok', w: bad }), /label w is not valid UTF-8/);
  }
  c.labels('\u{1F600}', '\uFFFD').inc();
  const text = await (await r.collect()).text();
  assert.deepEqual(
    parseExposition(text)
      .get('u_total')!
      .samples.map((s) => s.labels),
    [{ v: '\u{1F600}', w: '\uFFFD' }],
    'only the valid series exists',
  );
});

test('property: labels() accepts exactly the well-formed strings', () => {
  const c = new Counter({ name: 'wf_total', help: 'x', labelNames: ['v'], registers: [] });
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 6 }), (v) => {
      // independent of the code under test: a string survives a UTF-8 round trip exactly when it is well formed
      const wellFormed = Buffer.from(v, 'utf8').toString('utf8') === v;
      let accepted = true;
      try {
        c.labels(v);
      } catch {
        accepted = false;
      }
      assert.equal(accepted, wellFormed, JSON.stringify(v));
    }),
    propertyParams(500),
  );
});

test('a prom-client series with a lone-surrogate label value is left out (it would merge with U+FFFD), the family warned once', async () => {
  const logs = new LogCapture();
  try {
    const pr = new promClient.Registry();
    const g = new promClient.Gauge({ name: 'pc_utf8', help: 'x', labelNames: ['v'], registers: [pr] });
    g.labels('\uD800').set(1);
    g.labels('\uDC00').set(2);
    g.labels('ok').set(3);
    const r = new Registry();
    r.register(pr);
    for (let i = 0; i < 2; i++) {
      const text = await (await r.collect()).text();
      assert.deepEqual(
        parseExposition(text)
          .get('pc_utf8')!
          .samples.map((s) => [s.labels, s.value]),
        [[{ v: 'ok' }, 3]],
      );
    }
    assert.equal(logs.lines.filter((l) => l.includes('not valid UTF-8') && l.includes('pc_utf8')).length, 1);
  } finally {
    logs.restore();
  }
});
