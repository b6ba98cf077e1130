/** Aggregates the runs into medians and ratios and renders the Markdown report (pasted into docs/benchmarks.md). */
import type { MachineInfo } from './machine.js';
import type { RunRecord } from './measure.js';
import { cellKey, type Encoding, type SizeName } from './matrix.js';
import { fmt, fmtPaired, median, pairedRatios, ratio } from './stats.js';
import { footprintMedian, footprintTable, type FootprintResult } from './footprint.js';
import { admissionTable, type AdmissionResult } from './admission.js';
import { failoverTable, type FailoverResult } from './failover.js';
import { shardingTables, type ShardingResult } from './sharding.js';
import { controllerTable, type ControllerResult } from './controller.js';
import { OURS_NODE_ARGS } from './servers.js';

/** The one-off checks of a server at one size: what a single scrape returns, and promtool's verdict. */
export interface ScrapeCheck {
  size: SizeName;
  variant: string;
  enc: Encoding;
  status: number;
  contentType: string;
  contentEncoding: string;
  wireBytes: number;
  sampleLines: number;
  ms: number;
}

export interface LintCheck {
  size: SizeName;
  variant: string;
  rc: number | null;
  findings: string[];
}

export interface AuthCheck {
  size: SizeName;
  noToken: number;
  wrongToken: number;
  reader: number;
}

export interface MicroResult {
  opsPerTrial: number;
  trials: number;
  nsPerOp: Record<string, number>;
  reconcile: { usPerReconcile: number; reconciles: number };
  decision: { usPerDecision: number; usPerFilteredRequest?: number; decisions: number } | { skipped: string };
}

export interface BenchResults {
  machine: MachineInfo;
  command: string;
  mode: 'quick' | 'full';
  settings: {
    sizes: SizeName[];
    conns: number[];
    encodings: Encoding[];
    reps: number;
    c8DurationS: number;
    c1DurationS: number;
    warmupS: number;
    pinned: boolean;
  };
  runs: RunRecord[];
  /** RSS after the one-off checks (a scrape per variant and encoding), before the load runs. */
  idleRssMb: Record<string, Record<string, number>>;
  /** RSS after the servers filled their registries and started listening, before any scrape (absent in older results). */
  startRssMb?: Record<string, Record<string, number>>;
  /** The same after 15 s without a scrape, once V8's memory reducer has run (absent in older results). */
  settledRssMb?: Record<string, Record<string, number>>;
  /** The start-up cells (absent with --no-footprint and in older results). */
  footprint?: FootprintResult;
  /** The example defaulter's admission cells (absent with --no-admission and in older results). */
  admission?: AdmissionResult;
  /** Failover with and without warm-up (absent with --no-failover and in older results). */
  failover?: FailoverResult;
  /** The scaling sharding buys (absent with --no-sharding and in older results). */
  sharding?: ShardingResult;
  /** The reconcile path's cost (absent with --no-controller and in older results). */
  controller?: ControllerResult;
  scrapes: ScrapeCheck[];
  lint: LintCheck[];
  auth: AuthCheck[];
  micro?: MicroResult;
  elapsedS: number;
  loadAvgAtEnd: number[];
}

type Agg = {
  reqPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  cpuMsPerScrape?: number;
  peakRssMb?: number;
  eldP99Ms?: number;
  eldMaxMs?: number;
  n: number;
  invalid: number;
  reqs: number[];
};

/** Medians per (cell, variant) over the valid repetitions. */
export function aggregate(runs: RunRecord[]): Map<string, Map<string, Agg>> {
  const groups = new Map<string, Map<string, RunRecord[]>>();
  for (const r of runs) {
    const ck = cellKey(r.size as SizeName, r.enc as Encoding, r.conns);
    if (!groups.has(ck)) groups.set(ck, new Map());
    const g = groups.get(ck)!;
    if (!g.has(r.variant)) g.set(r.variant, []);
    g.get(r.variant)!.push(r);
  }
  const out = new Map<string, Map<string, Agg>>();
  for (const [ck, g] of groups) {
    const m = new Map<string, Agg>();
    for (const [v, rs] of g) {
      const ok = rs.filter((r) => !r.errors);
      m.set(v, {
        reqPerSec: median(ok.map((r) => r.reqPerSec)),
        p50Ms: median(ok.map((r) => r.p50Ms)),
        p99Ms: median(ok.map((r) => r.p99Ms)),
        cpuMsPerScrape: median(ok.map((r) => r.cpuMsPerScrape)),
        peakRssMb: median(ok.map((r) => r.peakRssMb)),
        eldP99Ms: median(ok.map((r) => r.eld?.p99Ms)),
        eldMaxMs: ok.some((r) => r.eld) ? Math.max(...ok.map((r) => r.eld?.maxMs ?? 0)) : undefined,
        n: ok.length,
        invalid: rs.length - ok.length,
        reqs: rs.map((r) => r.reqPerSec),
      });
    }
    out.set(ck, m);
  }
  return out;
}

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

function cells(res: BenchResults): Array<{ size: SizeName; enc: Encoding; conns: number; key: string }> {
  const out = [];
  for (const size of res.settings.sizes)
    for (const enc of res.settings.encodings)
      for (const conns of [...res.settings.conns].sort((a, b) => b - a))
        out.push({ size, enc, conns, key: cellKey(size, enc, conns) });
  return out;
}

/** The runs of one cell that completed without errors. */
function validRuns(res: BenchResults, key: string): RunRecord[] {
  return res.runs.filter((r) => !r.errors && cellKey(r.size as SizeName, r.enc as Encoding, r.conns) === key);
}

/** CPU-per-scrape ratios a/b of the repetitions of one cell that measured both variants without errors. */
function pairedCpu(res: BenchResults, key: string, a: string, b: string): number[] {
  const valid = validRuns(res, key);
  const reps = [...new Set(valid.map((r) => r.rep))];
  const cpuOf = (v: string, rep: number) => valid.find((r) => r.variant === v && r.rep === rep)?.cpuMsPerScrape;
  return pairedRatios(reps.map((rep) => [cpuOf(a, rep), cpuOf(b, rep)] as const));
}

/**
 * The filter's own time, measured inside the filtered server on every request of the run (bench/servers/ours.ts),
 * as the extra cost over a scrape without it: mean filter µs ÷ (CPU per scrape − mean filter µs), median over the
 * runs. An upper bound: the clock also runs through cache misses on the request's shared data and through garbage
 * collections that start inside the filter.
 */
function inSituFilter(
  res: BenchResults,
  key: string,
): { meanUs: number | undefined; medianUs: number | undefined; extra: number | undefined; maxUs: number | undefined } {
  const runs = validRuns(res, key).filter((r) => r.variant === 'ours' && r.eld?.filter);
  const extra = runs.map((r) => {
    const f = r.eld!.filter!.meanUs;
    const cpuUs = r.cpuMsPerScrape === undefined ? undefined : r.cpuMsPerScrape * 1000;
    return f === null || cpuUs === undefined || cpuUs <= f ? undefined : f / (cpuUs - f);
  });
  return {
    meanUs: median(runs.map((r) => r.eld!.filter!.meanUs)),
    medianUs: median(runs.map((r) => r.eld!.filter!.medianUs)),
    extra: median(extra),
    maxUs: runs.length ? Math.max(...runs.map((r) => r.eld!.filter!.maxUs)) : undefined,
  };
}

const pct = (x: number | undefined, digits = 1) => (x === undefined ? '–' : `${(x * 100).toFixed(digits)}%`);

/** Sample lines of the size, as our text output counts them (the denominator of CPU per line). */
function linesOf(res: BenchResults, size: SizeName, variant = 'ours-text'): number | undefined {
  return res.scrapes.find((s) => s.size === size && s.variant === variant && s.enc === 'plain')?.sampleLines;
}

export interface TargetRow {
  target: string;
  measured: string;
  met: boolean | undefined;
}

/** The issue's targets, evaluated on the medians. */
export function targets(res: BenchResults, agg = aggregate(res.runs)): TargetRow[] {
  const get = (size: SizeName, enc: Encoding, conns: number, v: string) => agg.get(cellKey(size, enc, conns))?.get(v);
  const rows: TargetRow[] = [];
  const thr = (size: SizeName, enc: Encoding, min: number) => {
    const r = ratio(get(size, enc, 8, 'ours')?.reqPerSec, get(size, enc, 8, 'go')?.reqPerSec);
    if (!res.settings.sizes.includes(size)) return;
    rows.push({
      target: `throughput ${size} ${enc} c8 ≥ ${min.toFixed(1)}× Go`,
      measured: `${fmt(get(size, enc, 8, 'ours')?.reqPerSec)} vs ${fmt(get(size, enc, 8, 'go')?.reqPerSec)} req/s = ${fmt(r, 2)}×`,
      met: r === undefined ? undefined : r >= min,
    });
  };
  thr('10k', 'plain', 1.0);
  thr('10k', 'gzip', 1.0);
  thr('100k', 'plain', 0.8);
  thr('100k', 'gzip', 0.8);
  for (const size of ['10k', '100k'] as SizeName[]) {
    if (!res.settings.sizes.includes(size)) continue;
    const lines = linesOf(res, size);
    const cpu = get(size, 'plain', 8, 'ours')?.cpuMsPerScrape;
    const us = cpu !== undefined && lines ? (cpu * 1000) / lines : undefined;
    const goCpu = get(size, 'plain', 8, 'go')?.cpuMsPerScrape;
    const goLines = linesOf(res, size, 'go');
    const goUs = goCpu !== undefined && goLines ? (goCpu * 1000) / goLines : undefined;
    rows.push({
      target: `CPU per sample line ${size} plain ≤ 1.0 µs (HTTPS included)`,
      measured: `${fmt(us)} µs (${fmt(cpu)} ms / ${lines ?? '–'} lines; Go ${fmt(goUs)} µs)`,
      met: us === undefined ? undefined : us <= 1.0,
    });
  }
  for (const [size, limit] of [
    ['10k', 5],
    ['100k', 20],
  ] as Array<[SizeName, number]>) {
    if (!res.settings.sizes.includes(size)) continue;
    const p = res.settings.encodings.map((e) => get(size, e, 8, 'ours')?.eldP99Ms);
    const worst = p.every((x) => x !== undefined) ? Math.max(...p) : undefined;
    const pc = res.settings.encodings.map((e) => get(size, e, 8, 'prom-client')?.eldP99Ms);
    rows.push({
      target: `event-loop delay p99 while scraped, ${size} c8 ≤ ${limit} ms`,
      measured: `${res.settings.encodings.map((e, i) => `${e} ${fmt(p[i])}`).join(', ')} ms (prom-client ${res.settings.encodings.map((e, i) => `${e} ${fmt(pc[i])}`).join(', ')} ms)`,
      met: worst === undefined ? undefined : worst <= limit,
    });
  }
  if (res.settings.sizes.includes('100k')) {
    const ours = Math.max(...res.settings.encodings.map((e) => get('100k', e, 8, 'ours')?.peakRssMb ?? NaN));
    const go = Math.max(...res.settings.encodings.map((e) => get('100k', e, 8, 'go')?.peakRssMb ?? NaN));
    const r = ratio(ours, go);
    rows.push({
      target: 'peak RSS at 100k (c8, worst encoding) ≤ 1.5× Go',
      measured: `${fmt(ours)} vs ${fmt(go)} MB = ${fmt(r, 2)}×`,
      met: r === undefined ? undefined : r <= 1.5,
    });
  }
  // Memory beside Go's at 1 connection, and what must not get worse for it
  if (res.settings.conns.includes(1)) {
    for (const size of ['10k', '100k'] as SizeName[]) {
      if (!res.settings.sizes.includes(size)) continue;
      const ours = Math.max(...res.settings.encodings.map((e) => get(size, e, 1, 'ours')?.peakRssMb ?? NaN));
      const go = Math.max(...res.settings.encodings.map((e) => get(size, e, 1, 'go')?.peakRssMb ?? NaN));
      const target = size === '10k' ? `≤ Go + 50 MB` : '≤ 1.2× Go';
      const met =
        Number.isNaN(ours) || Number.isNaN(go) ? undefined : size === '10k' ? ours <= go + 50 : ours <= 1.2 * go;
      rows.push({
        target: `peak RSS at ${size} (c1, worst encoding) ${target}`,
        measured: `${fmt(ours)} vs ${fmt(go)} MB (+${fmt(ours - go)} MB, ${fmt(ratio(ours, go), 2)}×)`,
        met,
      });
      for (const enc of res.settings.encodings) {
        const o = get(size, enc, 1, 'ours');
        const g = get(size, enc, 1, 'go');
        const thr = ratio(o?.reqPerSec, g?.reqPerSec);
        const cpu = ratio(o?.cpuMsPerScrape, g?.cpuMsPerScrape);
        rows.push({
          target: `throughput ${size} ${enc} c1 ≥ 2.0× Go`,
          measured: `${fmt(o?.reqPerSec)} vs ${fmt(g?.reqPerSec)} req/s = ${fmt(thr, 2)}×`,
          met: thr === undefined ? undefined : thr >= 2.0,
        });
        rows.push({
          target: `CPU per scrape ${size} ${enc} c1 ≤ 0.5× Go`,
          measured: `${fmt(o?.cpuMsPerScrape)} vs ${fmt(g?.cpuMsPerScrape)} ms = ${fmt(cpu, 2)}×`,
          met: cpu === undefined ? undefined : cpu <= 0.5,
        });
      }
    }
  }
  // the memory target: "idle RSS of the server process (registry with 10k series, no scrape)"
  const idle10k = (res.settledRssMb ?? res.startRssMb)?.['10k'];
  if (idle10k?.ours !== undefined && idle10k.go !== undefined) {
    rows.push({
      target: 'idle RSS with 10k series ≤ Go + 45 MB',
      measured: `${res.settledRssMb ? '15 s after start, no scrape: ' : ''}${fmt(idle10k.ours)} vs ${fmt(idle10k.go)} MB (+${fmt(idle10k.ours - idle10k.go)} MB)`,
      met: idle10k.ours <= idle10k.go + 45,
    });
  }
  if (res.footprint) {
    const f = res.footprint;
    const importMs = footprintMedian(f.importMs);
    const overBare = footprintMedian(f.importRssMb) - footprintMedian(f.bareRssMb);
    const startMs = footprintMedian(f.startMs);
    rows.push({
      target: "`import('ctrlmetrics')` ≤ 150 ms and ≤ 15 MB over bare Node",
      measured: `${fmt(importMs)} ms, +${fmt(overBare)} MB`,
      met: importMs <= 150 && overBare <= 15,
    });
    rows.push({
      target: 'quick-start manager: spawn → first `/metrics` 200 ≤ 500 ms',
      measured: `${fmt(startMs)} ms`,
      met: startMs <= 500,
    });
  }
  if (res.micro) {
    const inc = res.micro.nsPerOp['ours counter pre-bound child inc'];
    const obs = res.micro.nsPerOp['ours histogram pre-bound child observe'];
    rows.push({
      target: 'pre-bound counter increment ≤ 20 ns',
      measured: `${fmt(inc)} ns`,
      met: inc === undefined ? undefined : inc <= 20,
    });
    rows.push({
      target: 'pre-bound histogram observe ≤ 40 ns',
      measured: `${fmt(obs)} ns`,
      met: obs === undefined ? undefined : obs <= 40,
    });
  }
  const filterSize: SizeName | undefined = res.settings.sizes.includes('10k') ? '10k' : res.settings.sizes[0];
  if (filterSize) {
    for (const [enc, conns] of res.settings.encodings.flatMap((e) => res.settings.conns.map((c) => [e, c] as const))) {
      const key = cellKey(filterSize, enc, conns);
      const paired = pairedCpu(res, key, 'ours', 'ours-nofilter');
      const control = pairedCpu(res, key, 'ours-control', 'ours-nofilter');
      const inSitu = inSituFilter(res, key);
      rows.push({
        target: `auth filter (warm cache) costs ≤ 5% per scrape, ${filterSize} ${enc} c${conns}${conns === 8 ? '' : " (beyond the issue's 8 connections)"}`,
        measured:
          `in the server: ${fmt(inSitu.meanUs)} µs per request (mean; median ${fmt(inSitu.medianUs)}) = +${pct(inSitu.extra, 2)} over the scrape's CPU; ` +
          `A/B paired CPU/scrape ${fmtPaired(paired)}${control.length ? `, A/A control ${fmtPaired(control)}` : ''}`,
        met: inSitu.extra === undefined ? undefined : inSitu.extra <= 0.05,
      });
    }
  }
  const lint = res.lint.filter((l) => l.variant === 'ours-text');
  if (lint.length) {
    const clean = lint.every((l) => l.rc === 0 && l.findings.length === 0);
    rows.push({
      target: '`promtool check metrics` reports nothing on our output',
      measured: lint
        .map(
          (l) =>
            `${l.size}: rc=${l.rc}, ${l.findings.length} finding(s)${l.findings.length ? ` (${l.findings.slice(0, 3).join('; ')})` : ''}`,
        )
        .join('; '),
      met: clean,
    });
  }
  return rows;
}

const mark = (m: boolean | undefined) => (m === undefined ? 'n/a' : m ? '**met**' : '**not met**');

/** The whole Markdown report. */
export function renderReport(res: BenchResults): string {
  const agg = aggregate(res.runs);
  const get = (key: string, v: string) => agg.get(key)?.get(v);
  const m = res.machine;
  const out: string[] = [];
  out.push(`## Run of ${m.date} (${res.mode} mode, ${Math.round(res.elapsedS)} s)`);
  out.push('');
  out.push(`- Command: \`${res.command}\``);
  out.push(
    `- Machine: ${m.nproc} × ${m.cpuModel}, ${m.memGiB} GiB, Linux ${m.kernel}; load average at start ${m.loadAvgAtStart.join(' ')}, at end ${res.loadAvgAtEnd.join(' ')}`,
  );
  out.push(`- Versions: Node ${m.node}; ${m.go}; ${m.wrk.replace(/ Copyright.*/, '')}; prom-client ${m.promClient}`);
  const s = res.settings;
  out.push(
    `- Method: ${s.pinned ? 'servers pinned to CPU 0 (`taskset -c 0`, Go with GOMAXPROCS=1), wrk pinned to CPU 1 (`taskset -c 1 wrk -t1`)' : 'not pinned'}; ` +
      `${s.reps} repetition(s), variants alternated (order reversed and rotated every repetition); c8 runs ${s.c8DurationS} s, c1 runs ${s.c1DurationS} s (×1.6 at 100k), ` +
      `${s.warmupS} s warm-up per server and encoding. Cells show medians over the repetitions. ` +
      `Our servers run with ${OURS_NODE_ARGS.length ? `\`${OURS_NODE_ARGS.join(' ')}\`` : "Node's default V8 flags"}${process.env.CTRLMETRICS_BENCH_OURS_NODE_ARGS === undefined ? " (the generated manager.yaml's NODE_OPTIONS)" : ' (CTRLMETRICS_BENCH_OURS_NODE_ARGS)'}.`,
  );
  out.push('');
  out.push('### Targets');
  out.push('');
  out.push(
    table(
      ['target', 'measured (medians)', 'verdict'],
      targets(res, agg).map((t) => [t.target, t.measured, mark(t.met)]),
    ),
  );
  out.push('');

  out.push('### Throughput, req/s (ours = Prometheus Accept header → OpenMetrics; Go and prom-client serve text)');
  out.push('');
  out.push(
    table(
      ['size', 'enc', 'conns', 'Go', 'prom-client', 'ours', 'ours text', 'ours/Go', 'ours/prom-client', 'ours text/Go'],
      cells(res).map((c) => {
        const go = get(c.key, 'go')?.reqPerSec;
        const pc = get(c.key, 'prom-client')?.reqPerSec;
        const o = get(c.key, 'ours')?.reqPerSec;
        const ot = get(c.key, 'ours-text')?.reqPerSec;
        return [
          c.size,
          c.enc,
          `c${c.conns}`,
          fmt(go),
          fmt(pc),
          fmt(o),
          fmt(ot),
          fmt(ratio(o, go), 2),
          fmt(ratio(o, pc), 2),
          fmt(ratio(ot, go), 2),
        ];
      }),
    ),
  );
  out.push('');
  out.push(
    "### Protobuf: Prometheus 2.42's Accept header with native histograms on (both answer length-delimited MetricFamily messages)",
  );
  out.push('');
  out.push(
    table(
      [
        'size',
        'enc',
        'conns',
        'Go req/s',
        'ours req/s',
        'ours/Go',
        'Go CPU ms/scrape',
        'ours CPU ms/scrape',
        'ours/Go CPU',
        'ours OpenMetrics CPU ms/scrape',
        'Go peak MB',
        'ours peak MB',
      ],
      cells(res).map((c) => {
        const [go, o, om] = ['go-protobuf', 'ours-protobuf', 'ours'].map((v) => get(c.key, v));
        return [
          c.size,
          c.enc,
          `c${c.conns}`,
          fmt(go?.reqPerSec),
          fmt(o?.reqPerSec),
          fmt(ratio(o?.reqPerSec, go?.reqPerSec), 2),
          fmt(go?.cpuMsPerScrape),
          fmt(o?.cpuMsPerScrape),
          fmt(ratio(o?.cpuMsPerScrape, go?.cpuMsPerScrape), 2),
          fmt(om?.cpuMsPerScrape),
          fmt(go?.peakRssMb),
          fmt(o?.peakRssMb),
        ];
      }),
    ),
  );
  out.push('');
  out.push('### Latency, ms (wrk p50 / p99)');
  out.push('');
  out.push(
    table(
      [
        'size',
        'enc',
        'conns',
        'Go p50',
        'prom-client p50',
        'ours p50',
        'Go p99',
        'prom-client p99',
        'ours p99',
        'ours/Go p99',
        'ours/prom-client p99',
      ],
      cells(res).map((c) => {
        const [go, pc, o] = ['go', 'prom-client', 'ours'].map((v) => get(c.key, v));
        return [
          c.size,
          c.enc,
          `c${c.conns}`,
          fmt(go?.p50Ms),
          fmt(pc?.p50Ms),
          fmt(o?.p50Ms),
          fmt(go?.p99Ms),
          fmt(pc?.p99Ms),
          fmt(o?.p99Ms),
          fmt(ratio(o?.p99Ms, go?.p99Ms), 2),
          fmt(ratio(o?.p99Ms, pc?.p99Ms), 2),
        ];
      }),
    ),
  );
  out.push('');
  out.push('### Server CPU per scrape, ms (user+system of the server process / requests; TLS included)');
  out.push('');
  out.push(
    table(
      ['size', 'enc', 'conns', 'Go', 'prom-client', 'ours', 'ours text', 'ours/Go', 'ours/prom-client', 'ours µs/line'],
      cells(res).map((c) => {
        const [go, pc, o, ot] = ['go', 'prom-client', 'ours', 'ours-text'].map((v) => get(c.key, v)?.cpuMsPerScrape);
        const lines = linesOf(res, c.size);
        return [
          c.size,
          c.enc,
          `c${c.conns}`,
          fmt(go),
          fmt(pc),
          fmt(o),
          fmt(ot),
          fmt(ratio(o, go), 2),
          fmt(ratio(o, pc), 2),
          fmt(o !== undefined && lines ? (o * 1000) / lines : undefined),
        ];
      }),
    ),
  );
  out.push('');
  out.push(
    '### Peak RSS during the run, MB (VmHWM reset before each run) and event-loop delay of the Node servers, ms',
  );
  out.push('');
  out.push(
    table(
      [
        'size',
        'enc',
        'conns',
        'Go peak',
        'prom-client peak',
        'ours peak',
        'ours/Go',
        'ours/prom-client',
        'prom-client ELD p99',
        'ours ELD p99',
        'prom-client ELD max',
        'ours ELD max',
      ],
      cells(res).map((c) => {
        const [go, pc, o] = ['go', 'prom-client', 'ours'].map((v) => get(c.key, v));
        return [
          c.size,
          c.enc,
          `c${c.conns}`,
          fmt(go?.peakRssMb),
          fmt(pc?.peakRssMb),
          fmt(o?.peakRssMb),
          fmt(ratio(o?.peakRssMb, go?.peakRssMb), 2),
          fmt(ratio(o?.peakRssMb, pc?.peakRssMb), 2),
          fmt(pc?.eldP99Ms),
          fmt(o?.eldP99Ms),
          fmt(pc?.eldMaxMs),
          fmt(o?.eldMaxMs),
        ];
      }),
    ),
  );
  out.push('');
  out.push('### Filter cost: ours with the real authn/authz filter (warm cache) vs no filter');
  out.push('');
  out.push(
    'Listeners of one process (same code, heap and registry), the same request bytes (reader token included). ' +
      'Paired: the median, and the range, of the per-repetition ratios of alternated runs. ' +
      'A/A control: a second unfiltered listener against the baseline (only when run with `--variants=...,ours-control`): the noise floor. ' +
      "In the server: the filter's own time per request, clocked inside the filtered listener on every request of the run (bench/servers/ours.ts), " +
      "as extra over the rest of the scrape's CPU; an upper bound (the clock also runs through cache misses on the request's data and garbage collections that start inside the filter), " +
      'immune to the noise that moves whole runs.',
  );
  out.push('');
  out.push(
    table(
      [
        'size',
        'enc',
        'conns',
        'req/s filter',
        'req/s no filter',
        'CPU ms filter',
        'CPU ms no filter',
        'CPU Δ of medians',
        'CPU Δ paired',
        'A/A control paired',
        'filter µs/request in the server: mean / median (max)',
        'in-server extra (mean)',
      ],
      cells(res).map((c) => {
        const on = get(c.key, 'ours');
        const off = get(c.key, 'ours-nofilter');
        const r = ratio(on?.cpuMsPerScrape, off?.cpuMsPerScrape);
        const inSitu = inSituFilter(res, c.key);
        return [
          c.size,
          c.enc,
          `c${c.conns}`,
          fmt(on?.reqPerSec),
          fmt(off?.reqPerSec),
          fmt(on?.cpuMsPerScrape),
          fmt(off?.cpuMsPerScrape),
          pct(r === undefined ? undefined : r - 1),
          fmtPaired(pairedCpu(res, c.key, 'ours', 'ours-nofilter')),
          fmtPaired(pairedCpu(res, c.key, 'ours-control', 'ours-nofilter')),
          `${fmt(inSitu.meanUs)} / ${fmt(inSitu.medianUs)} (${fmt(inSitu.maxUs)})`,
          pct(inSitu.extra, 2),
        ];
      }),
    ),
  );
  out.push('');
  out.push('### One scrape: bytes on the wire, sample lines, content type');
  out.push('');
  out.push(
    table(
      ['size', 'variant', 'enc', 'status', 'wire bytes', 'sample lines', 'Content-Type'],
      res.scrapes.map((x) => [
        x.size,
        x.variant,
        x.enc,
        String(x.status),
        String(x.wireBytes),
        String(x.sampleLines),
        `\`${x.contentType}\`${x.contentEncoding ? ` (${x.contentEncoding})` : ''}`,
      ]),
    ),
  );
  out.push('');
  out.push('### Idle RSS after start (no scrape yet) and after the checks, MB; promtool; the filter answers');
  out.push('');
  if (res.startRssMb) {
    out.push('Before any scrape, 1 s after start:');
    out.push('');
    out.push(
      table(
        ['size', ...Object.keys(Object.values(res.startRssMb)[0] ?? {})],
        Object.entries(res.startRssMb).map(([size, v]) => [size, ...Object.values(v).map((x) => fmt(x))]),
      ),
    );
    out.push('');
    if (res.settledRssMb) {
      out.push('Before any scrape, 15 s after start (settled: V8 has run its memory reducer):');
      out.push('');
      out.push(
        table(
          ['size', ...Object.keys(Object.values(res.settledRssMb)[0] ?? {})],
          Object.entries(res.settledRssMb).map(([size, v]) => [size, ...Object.values(v).map((x) => fmt(x))]),
        ),
      );
      out.push('');
    }
    out.push('After the checks (one scrape per variant and encoding):');
    out.push('');
  }
  out.push(
    table(
      ['size', ...Object.keys(Object.values(res.idleRssMb)[0] ?? {})],
      Object.entries(res.idleRssMb).map(([size, v]) => [size, ...Object.values(v).map((x) => fmt(x))]),
    ),
  );
  out.push('');
  out.push(
    table(
      ['size', 'output', 'promtool rc', 'findings'],
      res.lint.map((l) => [l.size, l.variant, String(l.rc), l.findings.length ? l.findings.join('<br>') : 'none']),
    ),
  );
  out.push('');
  out.push(
    table(
      ['size', 'no token', 'wrong token', 'reader token'],
      res.auth.map((a) => [a.size, String(a.noToken), String(a.wrongToken), String(a.reader)]),
    ),
  );
  out.push('');
  if (res.footprint) {
    out.push(
      `### Start-up footprint (${res.footprint.reps} fresh processes of each kind, medians (min–max)${res.footprint.pinned ? ', pinned to CPU 0' : ''})`,
    );
    out.push('');
    out.push(...footprintTable(res.footprint));
    out.push('');
  }
  if (res.admission) {
    out.push(
      `### Admission (the example's defaulter, ${res.admission.path}, wrk on CPU 1, servers on CPU 0; ${res.admission.durationS} s per run, medians (min–max) of ${res.admission.cells[0]?.reqPerSec.length ?? 0})`,
    );
    out.push('');
    out.push(...admissionTable(res.admission));
    out.push('');
  }
  if (res.controller) {
    out.push(
      `### The reconcile path (a manager on CPU 0 annotating N cached ConfigMaps, one merge patch each; against ${res.controller.target}; medians (min–max) of ${res.controller.reps})`,
    );
    out.push('');
    out.push(...controllerTable(res.controller));
    out.push('');
  }
  if (res.failover) {
    out.push(
      `### Failover (leader killed with SIGKILL, ${res.failover.objects} cached ConfigMaps, Lease 2 s / 1.5 s / 0.2 s; medians (min–max) of ${res.failover.reps})`,
    );
    out.push('');
    out.push(...failoverTable(res.failover));
    out.push('');
  }
  if (res.sharding) {
    out.push(
      `### Sharding (the authority; ${res.sharding.objects} ConfigMaps reconciled in a loop, one worker per shard, ${res.sharding.windowS} s windows; medians (min–max) of ${res.sharding.reps})`,
    );
    out.push('');
    out.push(...shardingTables(res.sharding));
    out.push('');
  }
  if (res.micro) {
    const mi = res.micro;
    out.push(
      `### Micro-benchmarks (own process pinned to CPU 0; ${mi.opsPerTrial} ops per trial, median of ${mi.trials} trials, ours and prom-client alternated)`,
    );
    out.push('');
    out.push(
      table(
        ['operation', 'ns/op'],
        Object.entries(mi.nsPerOp).map(([k, v]) => [k, fmt(v)]),
      ),
    );
    out.push('');
    const pairs: Array<[string, string, string]> = [
      ['counter pre-bound child', 'ours counter pre-bound child inc', 'prom-client counter pre-bound child inc'],
      ['counter with label lookup', 'ours counter labels(route, code).inc()', 'prom-client counter inc({route, code})'],
      [
        'counter lookup over 300 series',
        'ours counter labels() cycling 300 series',
        'prom-client counter inc(labels) cycling 300 series',
      ],
      [
        'histogram pre-bound child',
        'ours histogram pre-bound child observe',
        'prom-client histogram pre-bound child observe',
      ],
      [
        'histogram pre-bound child, ours with native buckets',
        'ours histogram pre-bound child observe, with native buckets',
        'prom-client histogram pre-bound child observe',
      ],
      [
        'histogram with label lookup',
        'ours histogram labels(route, code).observe()',
        'prom-client histogram observe({route, code}, v)',
      ],
    ];
    out.push(
      table(
        ['operation', 'ours ns', 'prom-client ns', 'ours/prom-client'],
        pairs.map(([n, a, b]) => [
          n,
          fmt(mi.nsPerOp[a]),
          fmt(mi.nsPerOp[b]),
          fmt(ratio(mi.nsPerOp[a], mi.nsPerOp[b]), 2),
        ]),
      ),
    );
    out.push('');
    out.push(
      `- One instrumented reconcile (real Controller, queue add → get → no-op reconcile → done, all controller_runtime_* and workqueue_* metrics): **${fmt(mi.reconcile.usPerReconcile)} µs** (median over ${mi.reconcile.reconciles} reconciles)`,
    );
    out.push(
      'skipped' in mi.decision
        ? `- Cached authn+authz decision: skipped (${mi.decision.skipped})`
        : `- One cached authentication + authorization decision (real Authenticator, warm caches, HMAC of the token + cache look-ups): **${fmt(mi.decision.usPerDecision)} µs**; ` +
            `one whole request through the real filter (header parsing, decision, header scrub, its promise; garbage collection included): **${fmt(mi.decision.usPerFilteredRequest)} µs** (medians of trials of ${mi.decision.decisions})`,
    );
    out.push('');
  }
  out.push('### Per-run req/s (each repetition, in run order) — the spread');
  out.push('');
  const vs = [
    'go',
    'go-protobuf',
    'prom-client',
    'ours',
    'ours-text',
    'ours-protobuf',
    'ours-nofilter',
    'ours-control',
  ];
  out.push(
    table(
      ['size', 'enc', 'conns', ...vs],
      cells(res).map((c) => [
        c.size,
        c.enc,
        `c${c.conns}`,
        ...vs.map((v) => (get(c.key, v)?.reqs ?? []).map((x) => fmt(x)).join(', ') || '–'),
      ]),
    ),
  );
  const invalid = res.runs.filter((r) => r.errors);
  if (invalid.length) {
    out.push('');
    out.push(`Invalid runs (excluded from medians): ${invalid.length}`);
    for (const r of invalid.slice(0, 20))
      out.push(`- ${r.variant} ${r.size} ${r.enc} c${r.conns} rep ${r.rep}: ${r.errors}`);
  }
  out.push('');
  return out.join('\n');
}
