/**
 * Differential test against client_golang: test/differential/client_golang/main.go builds a registry
 * with client_golang (Debian's golang-go and golang-github-prometheus-client-golang-dev, GOPATH mode, installed by
 * scripts/install-test-deps.sh) and writes it in text 0.0.4 and OpenMetrics 1.0.0; this file builds the same
 * registry with ctrlmetrics' public classes and renders it through the same snapshot code /metrics uses.
 *
 * - text 0.0.4: byte for byte, family by family;
 * - OpenMetrics: line for line, with numbers compared as numbers (`3` and `3.0` are one value: client_golang writes
 *   `.0` on integers, we do not);
 * - both renderings, ours and Go's, parsed by Python's prometheus_client (Debian's python3-prometheus-client), a
 *   parser that shares no code with either, give the same families, samples and values;
 * - protobuf: ours read back by expfmt's own decoder gives our text 0.0.4 byte for byte; ours equals
 *   client_golang's bytes once the created timestamps (which Debian's client_golang 1.14 does not send yet, and
 *   v1.23 does) are taken out; the created timestamps, read by Go's protowire, are the series' creation times.
 *
 * Debian 12 has client_golang 1.14 with prometheus/common 0.39; the rules compared here are the same in
 * v1.23.2 / v0.67.5 (../shared/reference/client-golang-exposition.md §1–2).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { metrics } from '../../packages/ctrlmetrics/src/index.js';
import { clientGolang, clientGolangBinary } from '../helpers/client-golang.js';
import { webhookLatency } from '../../packages/ctrlmetrics/src/webhook/metrics.js';

const PYTHON = '/usr/bin/python3';
let work: string;
let goBin: string;

function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<string> {
  return new Promise((res, rej) => {
    const child = execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: 300_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        err ? rej(new Error(`${cmd} ${args.join(' ')} failed: ${stderr || err.message}`)) : res(stdout),
    );
    // a program that exits before reading all its input closes the pipe: its exit status tells, not an EPIPE
    child.stdin!.on('error', () => {});
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-differential-'));
  goBin = await clientGolangBinary();
});
after(() => rmSync(work, { recursive: true, force: true }));

/** The same registry as main.go's build(), with ctrlmetrics' public classes. */
function ours(): metrics.Registry {
  const r = new metrics.Registry();
  const registers = [r];
  const requests = new metrics.Counter({
    name: 'diff_requests_total',
    help: 'Requests, with "quotes", a \\ backslash\nand a newline',
    labelNames: ['method', 'code'],
    registers,
  });
  requests.labels('POST', '500').inc(1.5);
  requests.labels('GET', '200').inc(3);
  requests.labels('GET', '404').inc();
  requests.labels('get', '200').inc();

  new metrics.Counter({ name: 'diff_restarts', help: 'Restarts', registers }).inc(2);
  const events = new metrics.Counter({ name: 'diff_events', help: 'Events', labelNames: ['z', 'a'], registers });
  events.labels('2', '1').inc();
  events.labels('1', '2').inc(4);

  const escapes = new metrics.Gauge({
    name: 'diff_escapes',
    help: 'Escaped label values',
    labelNames: ['value'],
    registers,
  });
  ['back\\slash', 'say "hi"', 'two\nlines', 'ünïcødé ✓', '', 'a,b=c', '{}'].forEach((v, i) => escapes.labels(v).set(i));

  // computed at run time, as on the Go side
  const [point1, point2, ten] = [Number('0.1'), Number('0.2'), Number('10')];
  const special = new metrics.Gauge({ name: 'diff_special', help: 'Special values', labelNames: ['case'], registers });
  special.labels('nan').set(NaN);
  special.labels('plus_inf').set(Infinity);
  special.labels('minus_inf').set(-Infinity);
  special.labels('minus_zero').set(-0);
  special.labels('e21').set(ten ** 21);
  special.labels('sum').set(point1 + point2);
  special.labels('tiny').set(point1 * 1e-6);
  special.labels('million').set(ten * 1e5);
  special.labels('big').set(123456789);
  special.labels('minus_one').set(-1);
  special.labels('one').set(1);
  special.labels('fraction').set(point1 / 3);

  new metrics.Gauge({ name: 'diff:ratio:gauge', help: 'A recording-rule style name', registers }).set(0.25);

  const observations = [0.0005, 0.003, 0.04, 0.1, 0.3, 0.7, 0.8, 1, 2, 7.5, 12, 100];
  const def = new metrics.Histogram({
    name: 'diff_default_seconds',
    help: 'Default buckets',
    labelNames: ['op'],
    registers,
  });
  const linear = new metrics.Histogram({
    name: 'diff_linear',
    help: 'Linear buckets',
    buckets: metrics.linearBuckets(0.1, 0.1, 10),
    registers,
  });
  const exponential = new metrics.Histogram({
    name: 'diff_exponential',
    help: 'Exponential buckets',
    buckets: metrics.exponentialBuckets(0.001, 2.5, 8),
    registers,
  });
  const unordered = new metrics.Histogram({
    name: 'diff_unordered_seconds',
    help: 'Labels declared z, a',
    labelNames: ['z', 'a'],
    buckets: [0.5, 1],
    registers,
  });
  // the buckets controller_runtime_webhook_latency_seconds uses (src/webhook/metrics.ts)
  const webhook = new metrics.Histogram({
    name: 'diff_webhook_latency_seconds',
    help: 'Histogram of the latency of processing admission requests',
    labelNames: ['webhook'],
    buckets: webhookLatency.buckets,
    registers,
  });
  webhook.labels('/mutate-cache-example-com-v1alpha1-memcached').observe(0.00042);
  for (const v of observations) {
    def.labels('get').observe(v);
    linear.observe(v);
    exponential.observe(v);
    unordered.labels('last', 'first').observe(v);
  }
  def.labels('put').observe(0.2);
  return r;
}

async function render(format: 'text' | 'openmetrics'): Promise<{ go: string; ts: string }> {
  const go = await run(goBin, [format]);
  const ts = await (await ours().collect()).text(format);
  return { go, ts };
}

/** Lines per family, keyed by the name on its `# HELP` line. */
function families(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const help = /^# HELP (\S+) /.exec(line);
    if (help) out.set(help[1], (current = []));
    if (line && current && line !== '# EOF') current.push(line);
  }
  return out;
}

test('text 0.0.4: byte for byte what client_golang writes, family by family', async () => {
  const { go, ts } = await render('text');
  const g = families(go);
  const t = families(ts);
  assert.deepEqual([...t.keys()], [...g.keys()], 'the same families in the same order');
  assert.ok(g.size >= 10, `Go wrote ${g.size} families`);
  for (const [name, lines] of g) assert.deepEqual(t.get(name), lines, `family ${name}`);
  assert.equal(ts, go, 'the whole body');
});

/** A sample line with its value parsed, and `le` normalized: `1` and `1.0` are the same number. */
function normalize(line: string): string {
  if (line.startsWith('#')) return line;
  const m = /^(.*?)(\{.*\})? (\S+)$/.exec(line);
  assert.ok(m, `a sample line: ${line}`);
  const labels = (m[2] ?? '').replace(
    /(le|quantile)="([^"]+)"/g,
    (_, k: string, v: string) => `${k}="${Number(v.replace('+Inf', 'Infinity'))}"`,
  );
  const n = Number(m[3].replace(/^\+?Inf$/, 'Infinity').replace('-Inf', '-Infinity'));
  return `${m[1]}${labels} ${Object.is(n, -0) ? 0 : n}`;
}

test('OpenMetrics: line for line what client_golang writes, numbers compared as numbers', async () => {
  const { go, ts } = await render('openmetrics');
  assert.ok(go.endsWith('\n# EOF\n') && ts.endsWith('\n# EOF\n'));
  const g = families(go);
  const t = families(ts);
  assert.deepEqual([...t.keys()].sort(), [...g.keys()].sort());
  for (const [name, lines] of g) assert.deepEqual(t.get(name)!.map(normalize), lines.map(normalize), `family ${name}`);
});

test('OpenMetrics: a counter without _total is unknown with its own sample name, as the format rules say', async () => {
  const t = families((await render('openmetrics')).ts);
  assert.deepEqual(t.get('diff_restarts'), [
    '# HELP diff_restarts Restarts',
    '# TYPE diff_restarts unknown',
    'diff_restarts 2',
  ]);
  assert.deepEqual(t.get('diff_events'), [
    '# HELP diff_events Events',
    '# TYPE diff_events unknown',
    'diff_events{a="1",z="2"} 1',
    'diff_events{a="2",z="1"} 4',
  ]);
});

/** Families as Python's prometheus_client parses them: [name, type, [[sample name, labels, value]]]. */
async function pythonParse(text: string, format: 'text' | 'openmetrics'): Promise<unknown> {
  const script = join(work, 'parse.py');
  writeFileSync(
    script,
    [
      'import json, math, sys',
      'if sys.argv[1] == "openmetrics":',
      '    from prometheus_client.openmetrics.parser import text_string_to_metric_families',
      'else:',
      '    from prometheus_client.parser import text_string_to_metric_families',
      'def num(v):',
      '    return "NaN" if math.isnan(v) else repr(float(v))',
      'out = []',
      'for f in text_string_to_metric_families(sys.stdin.read()):',
      '    out.append([f.name, f.type, f.documentation, [[s.name, sorted(s.labels.items()), num(s.value)] for s in f.samples]])',
      'print(json.dumps(sorted(out)))',
    ].join('\n'),
  );
  return JSON.parse(await run(PYTHON, [script, format], { input: text }));
}

test("Python's prometheus_client parses ours and Go's renderings into the same families and values", async () => {
  for (const format of ['text', 'openmetrics'] as const) {
    const { go, ts } = await render(format);
    const goParsed = (await pythonParse(go, format)) as unknown[];
    const tsParsed = (await pythonParse(ts, format)) as unknown[];
    assert.ok(tsParsed.length >= 10, `${format}: parsed ${tsParsed.length} families`);
    assert.deepEqual(tsParsed, goParsed, format);
  }
});

/**
 * The delimited stream with each Counter's field 3 and Histogram's field 15 (created_timestamp) taken out, walked
 * with @bufbuild/protobuf's reader (not our encoder's code): MetricFamily.metric (4) → Metric.counter (3) /
 * Metric.histogram (7) → the timestamp field.
 */
function withoutCreated(stream: Buffer): Buffer {
  const copy = (
    msg: Uint8Array,
    drop: (field: number) => boolean,
    nested: Record<number, (m: Uint8Array) => Uint8Array>,
  ): Uint8Array => {
    const r = new BinaryReader(msg);
    const w = new BinaryWriter();
    while (r.pos < r.len) {
      const [field, wire] = r.tag();
      const start = r.pos;
      if (wire === WireType.LengthDelimited) {
        const body = r.bytes();
        if (drop(field)) continue;
        w.tag(field, wire).bytes(nested[field] ? nested[field](body) : body);
      } else {
        r.skip(wire, field);
        if (!drop(field)) w.tag(field, wire).raw(msg.subarray(start, r.pos));
      }
    }
    return w.finish();
  };
  const counter = (m: Uint8Array) => copy(m, (f) => f === 3, {});
  const histogram = (m: Uint8Array) => copy(m, (f) => f === 15, {});
  const metric = (m: Uint8Array) => copy(m, () => false, { 3: counter, 7: histogram });
  const family = (m: Uint8Array) => copy(m, () => false, { 4: metric });
  const r = new BinaryReader(stream);
  const out = new BinaryWriter();
  while (r.pos < r.len) out.bytes(family(r.bytes()));
  return Buffer.from(out.finish());
}

test("protobuf: client_golang's decoder reads ours back into our text 0.0.4, byte for byte", async () => {
  const r = ours();
  const snap = await r.collect();
  const pb = await snap.bytes('protobuf');
  const decoded = (await clientGolang(['decode'], pb)).toString('utf8');
  const text = await snap.text('text');
  assert.ok(families(text).size >= 10);
  assert.equal(decoded, text);
});

test("protobuf: the same bytes as client_golang's, created timestamps aside", async () => {
  const go = await clientGolang(['protobuf'], Buffer.alloc(0));
  const ts = await (await ours().collect()).bytes('protobuf');
  assert.ok(go.length > 1000, `Go wrote ${go.length} bytes`);
  const stripped = withoutCreated(ts);
  const at = stripped.findIndex((b, i) => b !== go[i]);
  assert.ok(
    at < 0 && stripped.length === go.length,
    `ours (${stripped.length} bytes) differs from Go's (${go.length}) at byte ${at}: ours …${stripped.subarray(Math.max(0, at - 16), at + 16).toString('hex')}…, Go's …${go.subarray(Math.max(0, at - 16), at + 16).toString('hex')}…`,
  );
  assert.ok(ts.length > go.length, 'ours carries created timestamps');
});

test('protobuf: counters and histograms carry their creation time as created_timestamp', async () => {
  const before = Date.now();
  const r = ours();
  const after = Date.now();
  const lines = (await clientGolang(['created'], await (await r.collect()).bytes('protobuf')))
    .toString('utf8')
    .trim()
    .split('\n');
  const names = new Set(lines.map((l) => l.slice(0, l.indexOf('{'))));
  assert.deepEqual([...names].sort(), [
    'diff_default_seconds',
    'diff_events',
    'diff_exponential',
    'diff_linear',
    'diff_requests_total',
    'diff_restarts',
    'diff_unordered_seconds',
    'diff_webhook_latency_seconds',
  ]);
  assert.equal(lines.length, 4 + 1 + 2 + 2 + 1 + 1 + 1 + 1, 'one per counter and histogram series, none for gauges');
  for (const l of lines) {
    const [, sec, nanos] = /\} (\d+) (\d+)$/.exec(l)!;
    const ms = Number(sec) * 1000 + Number(nanos) / 1e6;
    assert.ok(ms >= before && ms <= after, `${l}: ${ms} within ${before}–${after}`);
  }
  assert.match(
    lines.find((l) => l.startsWith('diff_requests_total'))!,
    /^diff_requests_total\{code="200",method="GET"\} \d+ \d+$/,
  );
});
