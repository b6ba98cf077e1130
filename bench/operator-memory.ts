/**
 * `npm run bench:operator-memory [-- --minutes=10 --objects=200 --interval-s=15]`: the example operator's memory
 * over time: `dist/examples/configmap-operator/main.js` against the embedded authority (running in this
 * process), `--objects` managed ConfigMaps to keep digests of, scraped every `--interval-s` seconds by a reader
 * with Prometheus' Accept header and gzip, for `--minutes`. RSS is sampled every second from /proc; reported: RSS
 * once every digest exists, the steady RSS (median of the second half of the run, and its range), and the peak
 * (VmHWM over the whole life of the process). The operator runs with the NODE_OPTIONS the generated manager.yaml
 * sets (MANAGER_NODE_OPTIONS: how a kubebuilder-style deployment of it runs); `--node-options=…` replaces them
 * (`--node-options=` for Node's defaults) and `--node-args=…` adds command-line flags; with `--node-args=--trace-gc` (not allowed in NODE_OPTIONS) the report adds the
 * live heap after full collections, minute by minute. `--snapshots-at=5,20` has the operator write a heap snapshot
 * (`--heapsnapshot-signal`; V8 collects all garbage first) that many minutes after sync: the report gives RSS just
 * before and a minute after each (a full GC's effect: garbage not yet collected, or memory that stays), the live
 * heap, and the kinds that grew between the first and the last snapshot (a leak's retained objects). Writing a
 * snapshot costs the operator memory of its own, so a run with snapshots does not measure the peak.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { KubeClient } from '../packages/ctrlmetrics/src/kube/client.js';
import { freePort } from './lib/ports.js';
import { memoryMb } from './lib/proc.js';
import { PROMETHEUS_ACCEPT } from './lib/matrix.js';
import { isYoungGc, parseGcLine } from './lib/gc-trace.js';
import { heapGrowth, summarizeHeapSnapshot, type HeapSummary } from './lib/heap-snapshot.js';
import { startTestCluster } from '../test/helpers/cluster.js';
import { MANAGER_NODE_OPTIONS } from '../packages/cli/src/scaffold/templates/config-manager.js';

const ROOT = resolve(import.meta.dirname, '..');
const NS = 'operator-memory';
const MANAGED = 'ctrlmetrics.dev/managed';

interface Settings {
  minutes: number;
  objects: number;
  intervalS: number;
  nodeOptions: string;
  nodeArgs: string[];
  snapshotsAt: number[];
}

function parseArgs(argv: string[]): Settings {
  const s: Settings = {
    minutes: 10,
    objects: 200,
    intervalS: 15,
    nodeOptions: MANAGER_NODE_OPTIONS,
    nodeArgs: [],
    snapshotsAt: [],
  };
  for (const a of argv) {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}: see the comment at the top of bench/operator-memory.ts`);
    const [, k, v] = m as unknown as [string, string, string];
    if (k === 'minutes') s.minutes = Number(v);
    else if (k === 'objects') s.objects = Number(v);
    else if (k === 'interval-s') s.intervalS = Number(v);
    else if (k === 'node-options') s.nodeOptions = v;
    else if (k === 'node-args') s.nodeArgs = v.split(/\s+/).filter(Boolean);
    else if (k === 'snapshots-at')
      s.snapshotsAt = v
        .split(',')
        .map(Number)
        .sort((a, b) => a - b);
    else throw new Error(`unknown flag --${k}`);
  }
  if (!(s.minutes > 0 && s.minutes <= 120)) throw new Error('--minutes: more than 0, at most 120');
  if (!(Number.isInteger(s.objects) && s.objects >= 1 && s.objects <= 10_000)) throw new Error('--objects: 1 to 10000');
  if (s.snapshotsAt.some((m) => !(m > 0 && m < s.minutes)))
    throw new Error('--snapshots-at: minutes after sync, each more than 0 and less than --minutes');
  if (!(s.intervalS >= 1 && s.intervalS <= 300)) throw new Error('--interval-s: 1 to 300');
  return s;
}

function scrape(port: number, token: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const headers = { Authorization: `Bearer ${token}`, Accept: PROMETHEUS_ACCEPT, 'Accept-Encoding': 'gzip' };
    // the operator serves its self-signed certificate here; this measures memory, not verification
    const req = request(
      { host: '127.0.0.1', port, path: '/metrics', headers, rejectUnauthorized: false, agent: false, timeout: 10_000 },
      (r) => {
        const parts: Buffer[] = [];
        r.on('data', (c: Buffer) => parts.push(c));
        r.on('end', () => {
          const raw = Buffer.concat(parts);
          res({
            status: r.statusCode ?? 0,
            body: (r.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'),
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('scrape timed out')));
    req.on('error', rej);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The heap snapshot the operator writes into `dir` on SIGUSR2, once it is whole (V8 writes it in pieces). */
async function awaitSnapshot(dir: string, seen: Set<string>): Promise<Buffer> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !seen.has(f));
    if (file) {
      const data = readFileSync(join(dir, file));
      try {
        JSON.parse(data.toString('utf8'));
        seen.add(file);
        return data;
      } catch {
        // still being written
      }
    }
    await sleep(500);
  }
  throw new Error(`no heap snapshot appeared in ${dir} within 120 s`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function main(): Promise<void> {
  const s = parseArgs(process.argv.slice(2));
  const entry = join(ROOT, 'packages/cli/dist/examples/configmap-operator/main.js');
  if (!existsSync(entry))
    throw new Error(`${entry} is missing: run \`npm run build\` (npm run bench:operator-memory does)`);
  const cluster = await startTestCluster();
  const admin = new KubeClient({ ...cluster.authority.restConfig, qps: 200, burst: 200 });
  let operator: ChildProcess | undefined;
  try {
    const token = await cluster.readerToken();
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (let i = 0; i < s.objects; i++) {
      await admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: NS, labels: { [MANAGED]: 'true' } },
        data: { a: `value-${i}`, b: 'x'.repeat(200) },
      });
    }
    const port = await freePort();
    const snapDir = s.snapshotsAt.length ? mkdtempSync(join(tmpdir(), 'operator-heap-')) : '';
    const snapArgs = snapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : [];
    const started = Date.now();
    operator = spawn(
      process.execPath,
      [
        ...s.nodeArgs,
        ...snapArgs,
        entry,
        '--kubeconfig',
        cluster.authority.kubeconfig,
        '--metrics-bind-address',
        `127.0.0.1:${port}`,
        '--health-probe-bind-address',
        '127.0.0.1:0',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KUBECONFIG: '', NODE_OPTIONS: s.nodeOptions, CTRLMETRICS_LOG_LEVEL: 'error' },
      },
    );
    // with --node-args=--trace-gc: the live heap after each full collection, to tell a leak from heap growth
    const fullGcs: Array<{ t: number; beforeMb: number; afterMb: number }> = [];
    const allGcs: Array<{ t: number; afterMb: number; committedMb: number }> = [];
    let gcBuf = '';
    operator.stdout!.setEncoding('utf8').on('data', (d: string) => {
      gcBuf += d;
      let nl: number;
      while ((nl = gcBuf.indexOf('\n')) >= 0) {
        const ev = parseGcLine(gcBuf.slice(0, nl));
        gcBuf = gcBuf.slice(nl + 1);
        if (ev) allGcs.push({ t: Date.now() - started, afterMb: ev.afterMb, committedMb: ev.committedAfterMb });
        if (ev && !isYoungGc(ev)) fullGcs.push({ t: Date.now() - started, beforeMb: ev.beforeMb, afterMb: ev.afterMb });
      }
    });
    let stderr = '';
    operator.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    const pid = operator.pid!;

    // synced: every source has its digest ConfigMap
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (operator.exitCode !== null) throw new Error(`the operator exited with ${operator.exitCode}:\n${stderr}`);
      if (Date.now() > deadline)
        throw new Error(`the operator did not write ${s.objects} digests within 120 s:\n${stderr}`);
      const list = await admin.get<{ items: Array<{ metadata: { name: string } }> }>(
        `/api/v1/namespaces/${NS}/configmaps`,
      );
      if (list.items.filter((c) => c.metadata.name.endsWith('-digest')).length >= s.objects) break;
      await sleep(250);
    }
    const syncedMs = Date.now() - started;
    const syncedMb = memoryMb(pid).rssMb;

    const samples: Array<{ t: number; rssMb: number }> = [];
    const snapshots: Array<{ minute: number; tSignal: number; t: number; rssBeforeMb: number; heap: HeapSummary }> = [];
    const seenSnapshots = new Set<string>();
    const pendingSnapshots = [...s.snapshotsAt];
    let scrapes = 0;
    let lastBody = 0;
    const end = Date.now() + s.minutes * 60_000;
    let nextScrape = Date.now();
    while (Date.now() < end) {
      if (operator.exitCode !== null) throw new Error(`the operator exited with ${operator.exitCode}:\n${stderr}`);
      if (Date.now() >= nextScrape) {
        const r = await scrape(port, token);
        if (r.status !== 200) throw new Error(`scrape answered ${r.status}: ${r.body.slice(0, 300)}`);
        scrapes++;
        lastBody = r.body.length;
        nextScrape += s.intervalS * 1000;
      }
      if (pendingSnapshots.length && Date.now() - started - syncedMs >= pendingSnapshots[0] * 60_000) {
        const minute = pendingSnapshots.shift()!;
        const rssBeforeMb = memoryMb(pid).rssMb;
        const tSignal = Date.now() - started;
        process.kill(pid, 'SIGUSR2');
        const heap = summarizeHeapSnapshot(await awaitSnapshot(snapDir, seenSnapshots));
        snapshots.push({ minute, tSignal, t: Date.now() - started, rssBeforeMb, heap });
      }
      samples.push({ t: Date.now() - started, rssMb: memoryMb(pid).rssMb });
      await sleep(1000);
    }
    const peakMb = memoryMb(pid).peakMb;
    const second = samples.slice(samples.length >> 1).map((x) => x.rssMb);
    const out: string[] = [];
    out.push(
      `## The example operator's memory: Node ${process.version}, ${s.objects} ConfigMaps, a scrape every ${s.intervalS} s (OpenMetrics + gzip), ${s.minutes} min, ${s.nodeOptions ? `NODE_OPTIONS=${s.nodeOptions}${s.nodeOptions === MANAGER_NODE_OPTIONS ? " (the generated manager.yaml's)" : ''}` : "Node's default flags"}`,
    );
    out.push('');
    out.push(
      `    npm run bench:operator-memory${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    );
    out.push('');
    out.push('| | MB | target |');
    out.push('|---|---|---|');
    out.push(
      `| RSS once every digest exists (${(syncedMs / 1000).toFixed(1)} s after spawn) | ${syncedMb.toFixed(1)} | |`,
    );
    out.push(
      `| steady RSS: median (min–max) of the second half | ${median(second).toFixed(1)} (${Math.min(...second).toFixed(1)}–${Math.max(...second).toFixed(1)}) | ≤ 64 |`,
    );
    out.push(`| peak RSS (VmHWM) over the process's life | ${peakMb.toFixed(1)} | ≤ 80 |`);
    out.push('');
    out.push(`${scrapes} scrapes, the last ${(lastBody / 1024).toFixed(1)} KB decoded.`);
    out.push('');
    // the trend: a steady process levels off, a leak keeps climbing
    const perMinute: string[] = [];
    for (let m = 1; m <= Math.floor(s.minutes); m++) {
      const inMinute = samples
        .filter((x) => x.t - syncedMs > (m - 1) * 60_000 && x.t - syncedMs <= m * 60_000)
        .map((x) => x.rssMb);
      if (inMinute.length) perMinute.push(`${m}: ${median(inMinute).toFixed(1)}`);
    }
    out.push(`Median RSS per minute after sync, MB: ${perMinute.join(' · ')}`);
    if (fullGcs.length) {
      const heapPerMinute: string[] = [];
      for (let m = 1; m <= Math.floor(s.minutes); m++) {
        const inMinute = fullGcs
          .filter((x) => x.t - syncedMs > (m - 1) * 60_000 && x.t - syncedMs <= m * 60_000)
          .map((x) => x.afterMb);
        if (inMinute.length) heapPerMinute.push(`${m}: ${Math.min(...inMinute).toFixed(1)}`);
      }
      out.push('');
      out.push(
        `Live heap after full GCs (--trace-gc), lowest per minute after sync, MB: ${heapPerMinute.join(' · ') || 'no full GC after sync'} (${fullGcs.length} full GCs in all)`,
      );
    }
    if (allGcs.length) {
      // heap used after a scavenge = live objects + old-generation garbage not yet marked; committed follows it
      const perMinuteGc: string[] = [];
      for (let m = 1; m <= Math.floor(s.minutes); m++) {
        const inMinute = allGcs.filter((x) => x.t - syncedMs > (m - 1) * 60_000 && x.t - syncedMs <= m * 60_000);
        if (inMinute.length)
          perMinuteGc.push(
            `${m}: ${median(inMinute.map((x) => x.afterMb)).toFixed(1)} / ${median(inMinute.map((x) => x.committedMb)).toFixed(1)}`,
          );
      }
      out.push('');
      out.push(
        `V8 heap used / committed after collections (--trace-gc), median per minute after sync, MB: ${perMinuteGc.join(' · ')}`,
      );
    }
    if (snapshots.length) {
      out.push('');
      out.push(
        '| heap snapshot | RSS before, MB | its full GC (--trace-gc): heap used before → after, MB | live heap in the snapshot, MB | heap objects |',
      );
      out.push('|---|---|---|---|---|');
      for (const x of snapshots) {
        // the snapshot collects all it can (several full GCs in a row): before the first, after the last
        const gcs = fullGcs.filter((g) => g.t >= x.tSignal && g.t <= x.t);
        out.push(
          `| ${x.minute} min after sync | ${x.rssBeforeMb.toFixed(1)} | ${gcs.length ? `${gcs[0].beforeMb.toFixed(1)} → ${gcs.at(-1)!.afterMb.toFixed(1)}` : '–'} | ${x.heap.totalMb.toFixed(2)} | ${x.heap.nodes} |`,
        );
      }
      if (snapshots.length > 1) {
        const first = snapshots[0];
        const last = snapshots[snapshots.length - 1];
        out.push('');
        out.push(
          `The kinds that grew most from ${first.minute} to ${last.minute} min (live bytes; objects by constructor):`,
        );
        out.push('');
        out.push('| kind | Δ objects | Δ KB | KB at the last |');
        out.push('|---|---|---|---|');
        for (const g of heapGrowth(first.heap, last.heap, 10))
          out.push(`| ${g.kind} | ${g.dCount} | ${(g.dBytes / 1024).toFixed(1)} | ${(g.bytes / 1024).toFixed(1)} |`);
      }
    }
    process.stdout.write(`${out.join('\n')}\n`);
    if (snapDir) rmSync(snapDir, { recursive: true, force: true });
  } finally {
    if (operator && operator.exitCode === null) {
      const exited = new Promise((r) => operator!.once('exit', r));
      operator.kill('SIGTERM');
      await exited;
    }
    admin.close();
    await cluster.stop();
  }
}

await main();
