/** Content negotiation: OpenMetrics only when asked for, text 0.0.4 otherwise (as client_golang with OpenMetrics on). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateFormat } from '../../src/metrics/index.js';

const TEXT = { format: 'text', contentType: 'text/plain; version=0.0.4; charset=utf-8' };
const OM = { format: 'openmetrics', contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8' };

test('no or generic Accept gives text 0.0.4', () => {
  assert.deepEqual(negotiateFormat(undefined), TEXT);
  assert.deepEqual(negotiateFormat(''), TEXT);
  assert.deepEqual(negotiateFormat('*/*'), TEXT);
  assert.deepEqual(negotiateFormat('text/plain'), TEXT);
  assert.deepEqual(negotiateFormat('text/plain;version=0.0.4'), TEXT);
  assert.deepEqual(negotiateFormat('application/json, text/html'), TEXT);
  assert.deepEqual(negotiateFormat('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited'), TEXT);
});

test("Prometheus 2.42's scrape Accept header gets OpenMetrics 1.0.0", () => {
  const prom = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
  assert.deepEqual(negotiateFormat(prom), OM);
  assert.deepEqual(negotiateFormat('application/openmetrics-text'), OM);
  assert.deepEqual(negotiateFormat('Application/OpenMetrics-Text; Version="1.0.0"'), OM);
});

test('q-values decide; unsupported versions and q=0 are skipped', () => {
  assert.deepEqual(negotiateFormat('application/openmetrics-text;q=0.4,text/plain;q=0.9'), TEXT);
  assert.deepEqual(negotiateFormat('text/plain;q=0.2, application/openmetrics-text;version=1.0.0;q=0.3'), OM);
  assert.deepEqual(negotiateFormat('application/openmetrics-text;version=2.0.0,text/plain'), TEXT);
  assert.deepEqual(negotiateFormat('application/openmetrics-text;q=0'), TEXT);
  assert.deepEqual(negotiateFormat('application/openmetrics-text;version=0.0.1'), {
    format: 'openmetrics',
    contentType: 'application/openmetrics-text; version=0.0.1; charset=utf-8',
  });
});

test('only a bounded prefix of a hostile Accept header is read', () => {
  const huge = 'x/y;q=0.1,'.repeat(100_000) + 'application/openmetrics-text';
  assert.deepEqual(negotiateFormat(huge), TEXT); // the OpenMetrics entry lies beyond the bounded prefix
  assert.deepEqual(negotiateFormat('x/y,'.repeat(40) + 'application/openmetrics-text'), TEXT); // beyond the entry limit
  assert.deepEqual(negotiateFormat(';;;,,,=;q=abc'), TEXT);
});
