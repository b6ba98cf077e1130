/**
 * Label names are typed, as prom-client types them: a `labelNames` literal makes the object form of `labels()` and
 * `remove()` check its keys at compile time (this file is compiled by `npm run typecheck`: each
 * `@ts-expect-error` below fails the build if the mistake it marks stops being an error), while metrics whose
 * label names are a plain `string[]` accept any key, and JavaScript callers get the runtime checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterOptions,
} from '../../packages/ctrlmetrics/src/metrics/index.js';

test('a labelNames literal types the keys of labels() and remove()', async () => {
  const registry = new Registry();
  const requests = new Counter({
    name: 'typed_requests_total',
    help: 'h',
    labelNames: ['code', 'method'],
    registers: [registry],
  });
  requests.labels({ code: '200', method: 'GET' }).inc();
  requests.labels('500', 'POST').inc(2);
  // @ts-expect-error -- a label the metric does not have
  assert.throws(() => requests.labels({ code: '200', verb: 'GET' }), /unknown label "verb"/);
  // @ts-expect-error -- a label it has, left out
  assert.throws(() => requests.labels({ code: '200' }), /label method needs a string value/);
  assert.equal(requests.remove({ code: '500', method: 'POST' }), true);

  const inFlight = new Gauge({
    name: 'typed_in_flight',
    help: 'h',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  inFlight.labels({ queue: 'a' }).set(3);
  // @ts-expect-error -- gauges too
  assert.throws(() => inFlight.labels({ line: 'a' }), /unknown label "line"/);

  const latency = new Histogram({
    name: 'typed_latency_seconds',
    help: 'h',
    labelNames: ['route'],
    buckets: [0.1, 1],
    registers: [registry],
  });
  latency.labels({ route: '/' }).observe(0.2);
  // @ts-expect-error -- histograms too
  assert.throws(() => latency.labels({ path: '/' }), /unknown label "path"/);

  const text = await (await registry.collect()).text('text');
  assert.match(text, /typed_requests_total\{code="200",method="GET"\} 1/);
  assert.match(text, /typed_in_flight\{queue="a"\} 3/);
});

test('label names that are a plain string[] (built at run time) accept any key, checked at run time', () => {
  const names: string[] = ['tenant'];
  const options: CounterOptions = { name: 'untyped_total', help: 'h', labelNames: names, registers: [] };
  const c = new Counter(options);
  c.labels({ tenant: 'a' }).inc();
  assert.throws(() => c.labels({ team: 'a' }), /unknown label "team"/);
});
