/**
 * UTF-8 metric and label names: accepted at registration, written quoted under `escaping=allow-utf-8`
 * and escaped by the negotiated scheme otherwise, in text 0.0.4, OpenMetrics and protobuf, and served with the
 * Content-Type client_golang answers each Prometheus Accept header with. Expected outputs are written by hand from
 * ../shared/reference/client-golang-exposition.md §1 (Names) and §6 (EscapeName's examples); the escaped outputs
 * are also read by promtool and by Python's prometheus_client parser, the protobuf by client_golang's decoder.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  type EscapingScheme,
} from '../../packages/ctrlmetrics/src/metrics/index.js';
import { createMetricsServer, type MetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { promtoolCheck } from '../controller/helpers/exposition.js';
import { decodeProtobufWithGo } from '../helpers/client-golang.js';
import { request } from '../server/helpers.js';

function registry(): Registry {
  const r = new Registry();
  const registers = [r];
  new Counter({ name: 'my.metric_total', help: 'c', labelNames: ['my.label', 'code'], registers })
    .labels('v', '200')
    .inc(3);
  new Gauge({ name: 'inflight_requests', help: 'g', labelNames: ['zone.name'], registers }).labels('eu').set(1.5);
  const h = new Histogram({ name: 'my.latency', help: 'l', buckets: [0.5, 1], registers });
  h.observe(0.25);
  h.observe(2);
  new Counter({ name: 'plain_total', help: 'p', registers }).inc();
  return r;
}

/** Text 0.0.4, by hand: the family and label names as each scheme writes them. */
function expectedText(n: {
  gaugeLabel: string;
  latency: string;
  metric: string;
  label: string;
  quoted: boolean;
}): string {
  const q = (s: string) => `"${s}"`;
  const lat = (suffix: string, pairs = '') =>
    n.quoted
      ? `{${q(n.latency + suffix)}${pairs ? ',' + pairs : ''}} `
      : `${n.latency}${suffix}${pairs ? `{${pairs}}` : ''} `;
  const fam = (s: string) => (n.quoted ? q(s) : s);
  return [
    '# HELP inflight_requests g',
    '# TYPE inflight_requests gauge',
    `inflight_requests{${n.gaugeLabel}="eu"} 1.5`,
    `# HELP ${fam(n.latency)} l`,
    `# TYPE ${fam(n.latency)} histogram`,
    `${lat('_bucket', 'le="0.5"')}1`,
    `${lat('_bucket', 'le="1"')}1`,
    `${lat('_bucket', 'le="+Inf"')}2`,
    `${lat('_sum')}2.25`,
    `${lat('_count')}2`,
    `# HELP ${fam(n.metric)} c`,
    `# TYPE ${fam(n.metric)} counter`,
    n.quoted ? `{${q(n.metric)},code="200",${n.label}="v"} 3` : `${n.metric}{code="200",${n.label}="v"} 3`,
    '# HELP plain_total p',
    '# TYPE plain_total counter',
    'plain_total 1',
    '',
  ].join('\n');
}

const EXPECTED_TEXT: Record<EscapingScheme, string> = {
  'allow-utf-8': expectedText({
    gaugeLabel: '"zone.name"',
    latency: 'my.latency',
    metric: 'my.metric_total',
    label: '"my.label"',
    quoted: true,
  }),
  underscores: expectedText({
    gaugeLabel: 'zone_name',
    latency: 'my_latency',
    metric: 'my_metric_total',
    label: 'my_label',
    quoted: false,
  }),
  dots: expectedText({
    gaugeLabel: 'zone_dot_name',
    latency: 'my_dot_latency',
    metric: 'my_dot_metric__total',
    label: 'my_dot_label',
    quoted: false,
  }),
  values: expectedText({
    gaugeLabel: 'U__zone_2e_name',
    latency: 'U__my_2e_latency',
    metric: 'U__my_2e_metric__total',
    label: 'U__my_2e_label',
    quoted: false,
  }),
};

const SCHEMES = ['allow-utf-8', 'underscores', 'dots', 'values'] as const;

/** Python's prometheus_client (Debian's) parses the text and prints each sample's name, labels and value. */
function pythonSamples(text: string): Promise<string[]> {
  const script = [
    'import sys, json',
    'from prometheus_client.parser import text_string_to_metric_families',
    'for f in text_string_to_metric_families(sys.stdin.read()):',
    '    for s in f.samples: print(json.dumps([s.name, dict(sorted(s.labels.items())), s.value]))',
  ].join('\n');
  return new Promise((res, rej) => {
    const child = execFile('/usr/bin/python3', ['-c', script], { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? rej(new Error(stderr || err.message)) : res(stdout.trim().split('\n')),
    );
    child.stdin!.on('error', () => {}); // an early exit closes the pipe: the exit status tells
    child.stdin!.end(text);
  });
}

describe('UTF-8 names in the text formats', () => {
  for (const scheme of SCHEMES) {
    test(`text 0.0.4, escaping=${scheme}`, async () => {
      const text = await (await registry().collect()).text('text', scheme);
      assert.equal(text, EXPECTED_TEXT[scheme]);
    });
  }

  test("without a scheme the names are escaped with underscores, client_golang's default", async () => {
    assert.equal(await (await registry().collect()).text('text'), EXPECTED_TEXT.underscores);
  });

  test("OpenMetrics, allow-utf-8: quoted names, the counter's family name without _total", async () => {
    const text = await (await registry().collect()).text('openmetrics', 'allow-utf-8');
    const lines = text.split('\n');
    for (const want of [
      'inflight_requests{"zone.name"="eu"} 1.5',
      '# TYPE "my.latency" histogram',
      '{"my.latency_bucket",le="0.5"} 1',
      '{"my.latency_bucket",le="+Inf"} 2',
      '{"my.latency_count"} 2',
      '# HELP "my.metric" c',
      '# TYPE "my.metric" counter',
      '{"my.metric_total",code="200","my.label"="v"} 3',
      '# EOF',
    ]) {
      assert.ok(lines.includes(want), `missing ${JSON.stringify(want)} in\n${text}`);
    }
  });

  test('OpenMetrics, values: the escaped counter name still ends in _total, so it stays a counter', async () => {
    const lines = (await (await registry().collect()).text('openmetrics', 'values')).split('\n');
    assert.ok(lines.includes('# TYPE U__my_2e_metric_ counter'));
    assert.ok(lines.includes('U__my_2e_metric__total{code="200",U__my_2e_label="v"} 3'));
  });

  for (const scheme of ['underscores', 'dots', 'values'] as const) {
    test(`escaping=${scheme}: promtool and Python's parser read every sample`, async () => {
      const snap = await registry().collect();
      const text = await snap.text('text', scheme);
      const lint = await promtoolCheck(text);
      assert.equal(lint.code, 0, lint.output);
      const om = await snap.text('openmetrics', scheme);
      const metric = EXPECTED_TEXT[scheme].split('\n')[12];
      const name = metric.slice(0, metric.indexOf('{'));
      const label = metric.slice(metric.lastIndexOf(',') + 1, metric.lastIndexOf('='));
      for (const body of [text, om]) {
        const samples = (await pythonSamples(body)).map((l) => JSON.parse(l) as unknown);
        assert.ok(
          samples.some((x) => isDeepStrictEqual(x, [name, { code: '200', [label]: 'v' }, 3])),
          `${name} not among\n${samples.map((x) => JSON.stringify(x)).join('\n')}`,
        );
      }
    });
  }
});

describe('UTF-8 names in protobuf', () => {
  test('allow-utf-8 sends the names as registered; underscores escapes them (read back by client_golang)', async () => {
    const snap = await registry().collect();
    // client_golang 1.14 (Debian's) refuses UTF-8 names, so the raw names are looked for in the bytes: protobuf
    // strings are their UTF-8 bytes after a length
    const raw = await snap.bytes('protobuf', 'allow-utf-8');
    for (const name of ['my.metric_total', 'my.label', 'zone.name', 'my.latency'])
      assert.ok(raw.includes(Buffer.from([name.length, ...Buffer.from(name)])), name);
    for (const name of ['my_metric_total', 'my_label', 'zone_name', 'my_latency']) assert.ok(!raw.includes(name), name);
    const escaped = await decodeProtobufWithGo(await snap.bytes('protobuf', 'underscores'));
    assert.match(escaped, /^my_metric_total\{code="200",my_label="v"\} 3$/m);
    assert.match(escaped, /^inflight_requests\{zone_name="eu"\} 1\.5$/m);
    assert.match(escaped, /^my_latency_count 2$/m);
    const values = await decodeProtobufWithGo(await snap.bytes('protobuf', 'values'));
    assert.match(values, /^U__my_2e_metric__total\{code="200",U__my_2e_label="v"\} 3$/m);
  });
});

describe('registration', () => {
  test("names that escape to a registered family's name are refused", () => {
    const r = new Registry();
    new Gauge({ name: 'my_metric', help: 'x', registers: [r] });
    assert.throws(
      () => new Gauge({ name: 'my.metric', help: 'x', registers: [r] }),
      /collides with the registered my_metric: both would write my_metric/,
    );
  });

  test('a label name with ":" is not legacy: quoted or escaped, never written bare', async () => {
    const r = new Registry();
    new Gauge({ name: 'g', help: 'x', labelNames: ['a:b'], registers: [r] }).labels('1').set(1);
    const snap = await r.collect();
    assert.match(await snap.text('text', 'allow-utf-8'), /^g\{"a:b"="1"\} 1$/m);
    assert.match(await snap.text('text', 'underscores'), /^g\{a_b="1"\} 1$/m);
  });
});

describe("served: each Prometheus Accept header gets client_golang's Content-Type and the names it asks for", () => {
  let server: MetricsServer;
  before(async () => {
    server = createMetricsServer({ bindAddress: '127.0.0.1:0', shutdownTimeoutMs: 2_000 }, { registry: registry() });
    await server.start();
  });
  after(() => server.stop());

  const PROTO = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';
  const CASES: Array<[string, string, string, string]> = [
    // [Prometheus, Accept, Content-Type, a line of the body]
    [
      '3.4–3.14',
      'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8',
      '{"my.metric_total",code="200","my.label"="v"} 3',
    ],
    [
      '3.0–3.3',
      'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;escaping=allow-utf-8;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;escaping=allow-utf-8;q=0.3,*/*;q=0.2',
      'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8',
      '{"my.metric_total",code="200","my.label"="v"} 3',
    ],
    [
      '3.4–3.14, legacy name validation',
      'application/openmetrics-text;version=1.0.0;escaping=underscores;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=underscores;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores',
      'my_metric_total{code="200",my_label="v"} 3',
    ],
    [
      '3.x, scrape_protocols: [PrometheusText1.0.0] (answered as text 0.0.4, as client_golang)',
      'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.2,*/*;q=0.1',
      'text/plain; version=0.0.4; charset=utf-8; escaping=allow-utf-8',
      '{"my.metric_total",code="200","my.label"="v"} 3',
    ],
    [
      '3.x, scrape_protocols: [PrometheusText0.0.4]',
      'text/plain;version=0.0.4;q=0.2,*/*;q=0.1',
      'text/plain; version=0.0.4; charset=utf-8; escaping=underscores',
      'my_metric_total{code="200",my_label="v"} 3',
    ],
    [
      '2.49.1–2.55.1',
      'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores',
      'my_metric_total{code="200",my_label="v"} 3',
    ],
    [
      'a scraper asking for dots',
      'text/plain;version=0.0.4;escaping=dots',
      'text/plain; version=0.0.4; charset=utf-8; escaping=dots',
      'my_dot_metric__total{code="200",my_dot_label="v"} 3',
    ],
    [
      'a scraper asking for values',
      'text/plain;version=0.0.4;escaping=values',
      'text/plain; version=0.0.4; charset=utf-8; escaping=values',
      'U__my_2e_metric__total{code="200",U__my_2e_label="v"} 3',
    ],
  ];
  for (const [who, accept, contentType, line] of CASES) {
    test(who, async () => {
      for (const gzip of [false, true]) {
        const reply = await request(`${server.url}/metrics`, {
          headers: { Accept: accept, ...(gzip ? { 'Accept-Encoding': 'gzip' } : {}) },
        });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers['content-type'], contentType);
        assert.ok(reply.text.split('\n').includes(line), `missing ${line} in\n${reply.text}`);
        assert.ok(reply.text.includes('\nplain_total 1'), 'legacy names are the same under every scheme');
      }
    });
  }

  test('3.0–3.3 native histograms: protobuf with escaping=allow-utf-8, the names as registered', async () => {
    const accept = `${PROTO};escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;escaping=allow-utf-8;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;escaping=allow-utf-8;q=0.2,*/*;q=0.1`;
    const reply = await request(`${server.url}/metrics`, { headers: { Accept: accept } });
    assert.equal(
      reply.headers['content-type'],
      'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping=allow-utf-8',
    );
    for (const name of ['my.metric_total', 'my.label', 'zone.name'])
      assert.ok(reply.body.includes(Buffer.from([name.length, ...Buffer.from(name)])), name);
  });

  test('3.4–3.14 proto first: protobuf with escaping=underscores (the proto entry carries none)', async () => {
    const reply = await request(`${server.url}/metrics`, {
      headers: {
        Accept: `${PROTO};q=0.6,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,*/*;q=0.1`,
      },
    });
    assert.equal(
      reply.headers['content-type'],
      'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping=underscores',
    );
    assert.match(await decodeProtobufWithGo(reply.body), /^my_metric_total\{code="200",my_label="v"\} 3$/m);
  });
});
