/**
 * Micro-benchmark of the metrics core alone (no HTTP, no TLS): render CPU per sample line and the longest
 * event-loop block (one render slice) for registries shaped like the side-by-side benchmark's
 * (K=10 counter vecs + K=10 histogram vecs, labels route/code, default buckets: ~15 lines per child pair),
 * in both formats, plus prom-client 15's `register.metrics()` on the same shape for comparison.
 *
 * Run: node --import tsx bench/micro-metrics.ts [--quick]
 * Prints one markdown table. Warm figures: the first render of a series also builds its cached label string.
 */
import * as promClient from 'prom-client';
import {
  Counter,
  Histogram,
  Registry,
  type EscapingScheme,
  type ExpositionFormat,
} from '../packages/ctrlmetrics/src/metrics/index.js';

const quick = process.argv.includes('--quick');
const K = 10;
const CODES = ['200', '404', '500'];
const REPS = quick ? 3 : 7;

/**
 * Our registry of that shape; `variant` `utf8` gives every family a name with dots (the slow path that builds its
 * lines per escaping scheme), `exemplars` attaches one exemplar to each counter series and histogram bucket used.
 */
function ours(n: number, variant: 'plain' | 'utf8' | 'exemplars' = 'plain'): Registry {
  const r = new Registry();
  const sep = variant === 'utf8' ? '.' : '_';
  for (let k = 0; k < K; k++) {
    const c = new Counter({
      name: `app${sep}requests_${k}_total`,
      help: 'Requests',
      labelNames: ['route', 'code'],
      registers: [r],
    });
    const h = new Histogram({
      name: `app${sep}request_duration_${k}_seconds`,
      help: 'Duration',
      labelNames: ['route', 'code'],
      registers: [r],
    });
    for (let i = 0; i < n; i++) {
      const route = `/api/v1/resource/${i}`;
      const ch = h.labels(route, CODES[i % 3]);
      if (variant === 'exemplars') {
        const trace_id = `4bf92f3577b34da6a3ce929d0e0e${String(i).padStart(4, '0')}`;
        c.labels(route, CODES[i % 3]).addWithExemplar(i + 1, { trace_id });
        ch.observeWithExemplar(0.01, { trace_id });
        ch.observeWithExemplar(0.3, { trace_id });
        ch.observeWithExemplar(2, { trace_id });
        continue;
      }
      c.labels(route, CODES[i % 3]).inc(i + 1);
      ch.observe(0.01);
      ch.observe(0.3);
      ch.observe(2);
    }
  }
  return r;
}

function theirs(n: number): promClient.Registry {
  const r = new promClient.Registry();
  for (let k = 0; k < K; k++) {
    const c = new promClient.Counter({
      name: `app_requests_${k}_total`,
      help: 'Requests',
      labelNames: ['route', 'code'],
      registers: [r],
    });
    const h = new promClient.Histogram({
      name: `app_request_duration_${k}_seconds`,
      help: 'Duration',
      labelNames: ['route', 'code'],
      registers: [r],
    });
    for (let i = 0; i < n; i++) {
      const labels = { route: `/api/v1/resource/${i}`, code: CODES[i % 3] };
      c.inc(labels, i + 1);
      h.observe(labels, 0.01);
      h.observe(labels, 0.3);
      h.observe(labels, 2);
    }
  }
  return r;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function renderOurs(
  r: Registry,
  format: ExpositionFormat,
  escaping: EscapingScheme = 'underscores',
): Promise<{ us: number; lines: number; maxSliceMs: number; bytes: number }> {
  const c0 = cpuUs();
  const snap = await r.collect();
  let bytes = 0;
  let maxSliceMs = 0;
  let t = performance.now();
  for await (const chunk of snap.chunks(format, escaping)) {
    bytes += chunk.length;
    const now = performance.now();
    maxSliceMs = Math.max(maxSliceMs, now - t);
    t = now;
  }
  return { us: cpuUs() - c0, lines: snap.lineCount, maxSliceMs, bytes };
}

const rows: string[] = [];
for (const n of quick ? [67, 667] : [7, 67, 667]) {
  const r = ours(n);
  const p = theirs(n);
  for (const format of ['text', 'openmetrics', 'protobuf'] as const) {
    // warm: builds the cached label strings (and the protobuf label bytes), and lets V8 optimise each format's path
    for (let i = 0; i < 20; i++) await renderOurs(r, format);
    const runs = [];
    for (let i = 0; i < REPS; i++) runs.push(await renderOurs(r, format));
    const lines = runs[0].lines;
    const us = median(runs.map((x) => x.us));
    const slice = median(runs.map((x) => x.maxSliceMs));
    let pcUs = NaN;
    if (format === 'text') {
      const pcs = [];
      await p.metrics();
      for (let i = 0; i < REPS; i++) {
        const c0 = cpuUs();
        await p.metrics();
        pcs.push(cpuUs() - c0);
      }
      pcUs = median(pcs);
    }
    rows.push(
      `| ${lines} | ${format} | ${(us / 1000).toFixed(2)} | ${(us / lines).toFixed(3)} | ${slice.toFixed(2)} | ${(runs[0].bytes / 1e6).toFixed(2)} | ${Number.isNaN(pcUs) ? '–' : (pcUs / 1000).toFixed(2)} | ${Number.isNaN(pcUs) ? '–' : (pcUs / lines).toFixed(3)} |`,
    );
  }
}

// the slow paths, at 100k lines: names to quote or escape, exemplars to append (OpenMetrics) or encode (protobuf)
const slowRows: string[] = [];
for (const [what, r, format, escaping] of [
  ['dotted names, allow-utf-8 (quoted)', ours(667, 'utf8'), 'text', 'allow-utf-8'],
  ['dotted names, underscores (escaped)', ours(667, 'utf8'), 'text', 'underscores'],
  ['dotted names, protobuf, underscores', ours(667, 'utf8'), 'protobuf', 'underscores'],
  ['every series and bucket with an exemplar', ours(667, 'exemplars'), 'openmetrics', 'underscores'],
  ['every series and bucket with an exemplar', ours(667, 'exemplars'), 'protobuf', 'underscores'],
] as const) {
  for (let i = 0; i < 20; i++) await renderOurs(r, format, escaping);
  const runs = [];
  for (let i = 0; i < REPS; i++) runs.push(await renderOurs(r, format, escaping));
  const us = median(runs.map((x) => x.us));
  slowRows.push(
    `| ${what} | ${format} | ${(us / 1000).toFixed(2)} | ${(us / runs[0].lines).toFixed(3)} | ${(runs[0].bytes / 1e6).toFixed(2)} |`,
  );
}

// pre-bound updates and label lookups
const oc = new Counter({ name: 'u_total', help: 'x', labelNames: ['route', 'code'], registers: [] });
const oh = new Histogram({ name: 'u_seconds', help: 'x', labelNames: ['route', 'code'], registers: [] });
const child = oc.labels('/api/v1/resource/1', '200');
const hchild = oh.labels('/api/v1/resource/1', '200');
const OPS = quick ? 200_000 : 2_000_000;
const nsPerOp = (f: (n: number) => void) => {
  f(OPS);
  const xs = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = process.hrtime.bigint();
    f(OPS);
    xs.push(Number(process.hrtime.bigint() - t0) / OPS);
  }
  return median(xs).toFixed(1);
};
const v = (i: number) => (i % 1000) / 100;
const updates = {
  'counter child inc': nsPerOp((n) => {
    for (let i = 0; i < n; i++) child.inc();
  }),
  'histogram child observe': nsPerOp((n) => {
    for (let i = 0; i < n; i++) hchild.observe(v(i));
  }),
  'counter child addWithExemplar': nsPerOp((n) => {
    for (let i = 0; i < n; i++) child.addWithExemplar(1, { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
  }),
  'histogram child observeWithExemplar': nsPerOp((n) => {
    for (let i = 0; i < n; i++) hchild.observeWithExemplar(v(i), { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
  }),
  'counter labels(route, code).inc()': nsPerOp((n) => {
    for (let i = 0; i < n; i++) oc.labels('/api/v1/resource/1', '200').inc();
  }),
  'histogram labels(route, code).observe()': nsPerOp((n) => {
    for (let i = 0; i < n; i++) oh.labels('/api/v1/resource/1', '200').observe(v(i));
  }),
};

console.log(`metrics core micro-benchmark, node ${process.version}, ${new Date().toISOString()}, median of ${REPS}\n`);
console.log(
  '| lines | format | ours CPU ms | ours µs/line | ours longest slice ms | MB | prom-client CPU ms | prom-client µs/line |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log('\n| 100k lines, slow path | format | ours CPU ms | ours µs/line | MB |\n|---|---|---|---|---|');
for (const row of slowRows) console.log(row);
console.log('\n| update | ns/op |\n|---|---|');
for (const [k, ns] of Object.entries(updates)) console.log(`| ${k} | ${ns} |`);
