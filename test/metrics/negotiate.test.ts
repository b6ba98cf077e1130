/**
 * Content negotiation with client_golang's outcomes (promhttp with OpenMetrics enabled, prometheus/common v0.67's
 * `NegotiateIncludingOpenMetrics`): the Accept header of every Prometheus release from 2.0 to 3.14, with and
 * without native histograms (proto first), and the Content-Type client_golang answers each with. The headers and
 * outcomes are read from ../shared/reference/client-golang-exposition.md §4–5 (Prometheus' config.go/scrape.go
 * and expfmt/encode.go + goautoneg), not produced by our code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateFormat } from '../../packages/ctrlmetrics/src/metrics/index.js';

const PROTO = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

const TEXT_CT = 'text/plain; version=0.0.4; charset=utf-8';
const OM1_CT = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
const OM0_CT = 'application/openmetrics-text; version=0.0.1; charset=utf-8';
const PROTO_CT = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

const ok = (format: string, base: string, escaping = 'underscores') => ({
  format,
  contentType: `${base}; escaping=${escaping}`,
  escaping,
});

/** [release(s), Accept header, expected answer]. */
const PROMETHEUS: Array<[string, string, ReturnType<typeof ok>]> = [
  [
    '2.0–2.48',
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
    ok('openmetrics', OM1_CT),
  ],
  // read from Debian's Prometheus 2.42 binary
  [
    '2.40–2.48 native histograms',
    `${PROTO},application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1`,
    ok('protobuf', PROTO_CT),
  ],
  [
    '2.49.0 (the */*;q=2 bug)',
    'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=2',
    ok('openmetrics', OM1_CT),
  ],
  [
    '2.49.1–2.55.1',
    'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
    ok('openmetrics', OM1_CT),
  ],
  [
    '2.49.1–2.55.1 native histograms',
    `${PROTO};q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,application/openmetrics-text;version=0.0.1;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1`,
    ok('protobuf', PROTO_CT),
  ],
  [
    '3.0–3.3',
    'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;escaping=allow-utf-8;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;escaping=allow-utf-8;q=0.3,*/*;q=0.2',
    ok('openmetrics', OM1_CT, 'allow-utf-8'),
  ],
  [
    '3.0–3.3 native histograms',
    `${PROTO};escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;escaping=allow-utf-8;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;escaping=allow-utf-8;q=0.2,*/*;q=0.1`,
    ok('protobuf', PROTO_CT, 'allow-utf-8'),
  ],
  [
    '3.4–3.14',
    'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
    ok('openmetrics', OM1_CT, 'allow-utf-8'),
  ],
  [
    '3.4–3.14 proto first (native histograms)',
    `${PROTO};q=0.6,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1`,
    ok('protobuf', PROTO_CT),
  ],
  [
    '3.4–3.14, legacy name validation',
    'application/openmetrics-text;version=1.0.0;escaping=underscores;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=underscores;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
    ok('openmetrics', OM1_CT),
  ],
  // scrape_protocols set to one protocol: the only entry, then */*
  ['3.x, scrape_protocols: [PrometheusText0.0.4]', 'text/plain;version=0.0.4;q=0.2,*/*;q=0.1', ok('text', TEXT_CT)],
  [
    '3.x, scrape_protocols: [OpenMetricsText0.0.1]',
    'application/openmetrics-text;version=0.0.1;q=0.2,*/*;q=0.1',
    ok('openmetrics', OM0_CT),
  ],
  // client_golang writes no text 1.0.0: the entry is skipped, and nothing else but */* is left
  [
    '3.x, scrape_protocols: [PrometheusText1.0.0]',
    'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.2,*/*;q=0.1',
    ok('text', TEXT_CT, 'allow-utf-8'),
  ],
  ['3.x, scrape_protocols: [PrometheusProto]', `${PROTO};q=0.2,*/*;q=0.1`, ok('protobuf', PROTO_CT)],
];

for (const [release, accept, want] of PROMETHEUS) {
  test(`Prometheus ${release}: answered as client_golang answers`, () => {
    assert.deepEqual(negotiateFormat(accept), want);
  });
}

test('no Accept header, a wildcard or an unknown type: text 0.0.4', () => {
  for (const a of [undefined, '', '*/*', '*', 'text/*', 'application/json, text/html', 'text/plain;version=1.0.0']) {
    assert.deepEqual(negotiateFormat(a), ok('text', TEXT_CT), String(a));
  }
  assert.deepEqual(negotiateFormat('text/plain'), ok('text', TEXT_CT));
  assert.deepEqual(negotiateFormat('text/plain;version=0.0.4'), ok('text', TEXT_CT));
});

test('OpenMetrics without a version is 0.0.1, as client_golang answers it; 1.0.0 only when asked for', () => {
  assert.deepEqual(negotiateFormat('application/openmetrics-text'), ok('openmetrics', OM0_CT));
  assert.deepEqual(negotiateFormat('application/openmetrics-text;version=1.0.0'), ok('openmetrics', OM1_CT));
  assert.deepEqual(negotiateFormat('application/openmetrics-text;version=2.0.0,text/plain'), ok('text', TEXT_CT));
});

test('protobuf only as length-delimited MetricFamily messages', () => {
  assert.deepEqual(negotiateFormat(PROTO), ok('protobuf', PROTO_CT));
  // the debugging text encodings and other messages are skipped (client_golang would answer encoding=text)
  assert.deepEqual(
    negotiateFormat('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text'),
    ok('text', TEXT_CT),
  );
  assert.deepEqual(
    negotiateFormat(
      'application/vnd.google.protobuf;proto=other.Message;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.1',
    ),
    ok('openmetrics', OM1_CT),
  );
  assert.deepEqual(negotiateFormat('application/vnd.google.protobuf'), ok('text', TEXT_CT));
});

test('q decides; at equal q a concrete type comes before a wildcard, otherwise the order sent', () => {
  assert.deepEqual(
    negotiateFormat('application/openmetrics-text;version=1.0.0;q=0.4,text/plain;q=0.9'),
    ok('text', TEXT_CT),
  );
  assert.deepEqual(
    negotiateFormat('text/plain;q=0.2, application/openmetrics-text;version=1.0.0;q=0.3'),
    ok('openmetrics', OM1_CT),
  );
  assert.deepEqual(negotiateFormat(`text/plain, ${PROTO}`), ok('text', TEXT_CT));
  assert.deepEqual(negotiateFormat(`*/*, ${PROTO}`), ok('protobuf', PROTO_CT));
});

test('escaping: remembered from entries walked before the match, unknown values ignored, underscores by default', () => {
  assert.deepEqual(
    negotiateFormat('text/plain;version=1.0.0;escaping=dots;q=0.9,text/plain;version=0.0.4;q=0.5'),
    ok('text', TEXT_CT, 'dots'),
  );
  assert.deepEqual(negotiateFormat('text/plain;escaping=values'), ok('text', TEXT_CT, 'values'));
  assert.deepEqual(negotiateFormat('text/plain;escaping=bogus'), ok('text', TEXT_CT));
  // an entry after the match is never walked
  assert.deepEqual(negotiateFormat('text/plain;q=0.9,application/json;escaping=dots;q=0.5'), ok('text', TEXT_CT));
  // nothing matched: the last remembered value still applies
  assert.deepEqual(negotiateFormat('application/json;escaping=allow-utf-8'), ok('text', TEXT_CT, 'allow-utf-8'));
});

test('deliberate differences: q=0 and a q that is not a number refuse an entry; case and quotes as RFC 9110 reads them', () => {
  assert.deepEqual(negotiateFormat(`${PROTO};q=0`), ok('text', TEXT_CT));
  assert.deepEqual(
    negotiateFormat('application/openmetrics-text;version=1.0.0;q=abc,text/plain;q=0.1'),
    ok('text', TEXT_CT),
  );
  assert.deepEqual(negotiateFormat('Application/OpenMetrics-Text; Version="1.0.0"'), ok('openmetrics', OM1_CT));
});

test('only a bounded prefix of a hostile Accept header is read', () => {
  const huge = 'x/y;q=0.1,'.repeat(100_000) + 'application/openmetrics-text;version=1.0.0';
  assert.deepEqual(negotiateFormat(huge), ok('text', TEXT_CT)); // the OpenMetrics entry lies beyond the bounded prefix
  assert.deepEqual(
    negotiateFormat('x/y,'.repeat(40) + 'application/openmetrics-text;version=1.0.0'),
    ok('text', TEXT_CT),
  ); // beyond the entry limit
  assert.deepEqual(negotiateFormat(';;;,,,=;q=abc'), ok('text', TEXT_CT));
});
