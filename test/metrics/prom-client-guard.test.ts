/**
 * prom-client 15 hashes label sets without escaping, so `{a:"1,b:2"}` and `{a:"1",b:"2"}` become one series inside
 * prom-client before the registry sees them. That cannot be undone after the fact; the guard warns, once per
 * family, when a stored label value has the colliding shape, and the ctrlmetrics classes keep the two apart.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as promClient from 'prom-client';
import * as metrics from '../../packages/ctrlmetrics/src/metrics/index.js';
import { LogCapture } from '../helpers/log-capture.js';
import { parseExposition, samples } from '../controller/helpers/exposition.js';

const logs = new LogCapture();
after(() => logs.restore());

async function render(): Promise<string> {
  const snap = await metrics.registry.collect();
  const parts: Buffer[] = [];
  for await (const c of snap.chunks('text')) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}

const warningsFor = (family: string) =>
  logs.lines.filter(
    (l) => l.includes('"level":"warn"') && l.includes(`"family":"${family}"`) && l.includes('prom-client 15 merges'),
  );

test('a prom-client family with a colliding label value is named in one warning, however often it is scraped', async () => {
  const c = new promClient.Counter({ name: 'guard_collision_total', help: 'h', labelNames: ['a', 'b'] });
  try {
    c.inc({ a: '1,b:2' });
    c.inc({ a: '1', b: '2' });
    await render();
    await render();
    assert.equal(warningsFor('guard_collision_total').length, 1);
  } finally {
    promClient.register.removeSingleMetric('guard_collision_total');
  }
});

test('no warning for label values with commas or colons that cannot collide', async () => {
  const c = new promClient.Counter({ name: 'guard_harmless_total', help: 'h', labelNames: ['a', 'b'] });
  try {
    c.inc({ a: 'x,y', b: 'k:v' }); // no ",<label name>:" inside any value
    c.inc({ a: 'only,a' });
    const text = await render();
    assert.equal(samples(parseExposition(text), 'guard_harmless_total').length, 2);
    assert.equal(warningsFor('guard_harmless_total').length, 0);
  } finally {
    promClient.register.removeSingleMetric('guard_harmless_total');
  }
});

test('the same label sets through metrics.Counter stay two series', async () => {
  const c = new metrics.Counter({ name: 'guard_ours_total', help: 'h', labelNames: ['a', 'b'], registers: [] });
  metrics.mustRegister(c);
  try {
    c.labels({ a: '1,b:2', b: '' }).inc();
    c.labels({ a: '1', b: '2' }).inc();
    const got = samples(parseExposition(await render()), 'guard_ours_total').map((s) => [
      s.labels.a,
      s.labels.b ?? '(none)',
      s.value,
    ]);
    assert.deepEqual(got.sort(), [
      ['1', '2', 1],
      ['1,b:2', '', 1],
    ]);
  } finally {
    metrics.unregister(c);
  }
});
