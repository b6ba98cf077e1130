/**
 * Admission requests per second, latency and CPU of the example operator's defaulter (examples/memcached-operator/
 * webhook.ts) served by a manager of its own process (bench/servers/admission-ours.ts, the library from dist), side by
 * side with two floors on the same machine: a bare `node:https` server answering the same patch
 * (bench/servers/admission-node.ts) and Go's net/http + encoding/json doing the same (bench/servers/admission-go,
 * built when `go` is there). Each server pinned to CPU 0 (Go with GOMAXPROCS=1), wrk on CPU 1 POSTing the same
 * AdmissionReview over keep-alive HTTPS; each connection count `reps` times, servers alternated. CPU is the server
 * process's user + system time over the run, per 1,000 answers; RSS is read after the runs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { spawnTracked, stopChild } from './children.js';
import { buildGoFloor, libEnv, REPO_ROOT, type PreparedLib } from './servers.js';
import { runWrk } from './wrk.js';
import { generateCA, issueServingCert } from '../../test/helpers/certs.js';
import type { TestCluster } from '../../test/helpers/cluster.js';

export interface AdmissionCell {
  server: string;
  conns: number;
  reqPerSec: number[];
  p50Ms: number[];
  p99Ms: number[];
  /** Server CPU seconds per 1,000 answers. */
  cpuSPer1000: number[];
}

export interface AdmissionResult {
  path: string;
  durationS: number;
  /** The servers measured, in table order. */
  servers: string[];
  cells: AdmissionCell[];
  /** RSS of each server after its runs, MB. */
  rssMb: Record<string, number>;
}

const PATH = '/mutate-cache-example-com-v1alpha1-memcached';

/** The AdmissionReview every request sends: a Memcached without an image, which the defaulter sets. */
const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached' },
    resource: { group: 'cache.example.com', version: 'v1alpha1', resource: 'memcacheds' },
    operation: 'CREATE',
    userInfo: { username: 'system:serviceaccount:load:generator' },
    object: {
      apiVersion: 'cache.example.com/v1alpha1',
      kind: 'Memcached',
      metadata: { name: 'm1', namespace: 'load' },
      spec: { size: 1 },
    },
  },
});

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const stat = (xs: number[], d = 1) =>
  `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

/** user + system CPU seconds of a process so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

type Running = { name: string; child: ChildProcess; pid: number; url: string };

/**
 * CTRLMETRICS_BENCH_CPU_PROF=DIR: the Node server named writes a V8 CPU profile into DIR/<name> as it exits
 * (bench/profile-summary.ts reads it).
 */
function cpuProfile(name: string): string[] {
  const dir = process.env.CTRLMETRICS_BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', join(dir, name)] : [];
}

/** Starts one server and waits for its `WEBHOOK <port>` line. */
async function start(
  name: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  pin: boolean,
): Promise<Running> {
  const [c, a] = pin ? ['taskset', ['-c', '0', cmd, ...args]] : [cmd, args];
  const child = spawnTracked(c, a, {
    cwd: REPO_ROOT,
    env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
  const deadline = Date.now() + 60_000;
  while (!/^WEBHOOK (\d+)$/m.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`${name} did not serve within 60 s: ${out}${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const port = Number(/^WEBHOOK (\d+)$/m.exec(out)![1]);
  // taskset execs the server: the pid is the server's
  return { name, child, pid: child.pid!, url: `https://127.0.0.1:${port}${PATH}` };
}

export async function measureAdmission(
  cluster: TestCluster,
  lib: PreparedLib,
  conns: number[],
  reps: number,
  durationS: number,
  pin: boolean,
): Promise<AdmissionResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-admission-'));
  const ca = await generateCA('bench-admission-ca');
  const pair = await issueServingCert(ca, ['127.0.0.1']);
  writeFileSync(join(dir, 'tls.crt'), pair.certPem);
  writeFileSync(join(dir, 'tls.key'), pair.keyPem);
  const lua = join(dir, 'post.lua');
  // the body as a Lua long string: the JSON holds no "]]"
  writeFileSync(
    lua,
    `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [[${REVIEW}]]\n`,
  );
  const running: Running[] = [];
  const goBin = await buildGoFloor('admission-go');
  try {
    running.push(
      await start(
        'ours',
        process.execPath,
        [...lib.nodeArgs, ...cpuProfile('ours'), lib.script('servers/admission-ours.ts')],
        { ...libEnv(lib), CERT_DIR: dir, RESTCONFIG: JSON.stringify(cluster.authority.restConfig) },
        pin,
      ),
    );
    // CTRLMETRICS_BENCH_ADMISSION_BEFORE=<another checkout, built>: its library and example beside this tree's, in
    // the same alternated runs (an A/B of a change to the webhook path)
    const before = process.env.CTRLMETRICS_BENCH_ADMISSION_BEFORE;
    if (before)
      running.push(
        await start(
          'ours-before',
          process.execPath,
          [lib.script('servers/admission-ours.ts')],
          {
            CTRLMETRICS_LIB_ROOT: pathToFileURL(join(before, 'packages/ctrlmetrics/dist/src')).href + '/',
            CTRLMETRICS_LIB_EXT: '.js',
            CTRLMETRICS_EXAMPLES_ROOT: pathToFileURL(join(before, 'dist/examples')).href + '/',
            CERT_DIR: dir,
            RESTCONFIG: JSON.stringify(cluster.authority.restConfig),
          },
          pin,
        ),
      );
    running.push(
      await start(
        'node-https',
        process.execPath,
        [...cpuProfile('node-https'), lib.script('servers/admission-node.ts')],
        { CERT_DIR: dir },
        pin,
      ),
    );
    if (goBin)
      running.push(await start('go-nethttp', goBin, [], { CERT_DIR: dir, ...(pin ? { GOMAXPROCS: '1' } : {}) }, pin));
    const cells: AdmissionCell[] = running.flatMap((s) =>
      conns.map((c) => ({ server: s.name, conns: c, reqPerSec: [], p50Ms: [], p99Ms: [], cpuSPer1000: [] })),
    );
    const cpu = pin ? '1' : undefined;
    // warm-up: JIT, TLS session set-up, the defaulter's first (lazy) load
    for (const s of running) await runWrk({ url: s.url, connections: 8, durationS: 2, headers: {}, script: lua, cpu });
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 ? [...running].reverse() : running;
      for (const c of conns) {
        for (const s of order) {
          const before = cpuSeconds(s.pid);
          const r = await runWrk({ url: s.url, connections: c, durationS, headers: {}, script: lua, cpu });
          const used = cpuSeconds(s.pid) - before;
          if (
            r.non2xx ||
            r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout
          ) {
            throw new Error(
              `${s.name} at ${c} connections: ${r.non2xx} non-2xx answers, socket errors ${JSON.stringify(r.socketErrors)}`,
            );
          }
          const cell = cells.find((x) => x.server === s.name && x.conns === c)!;
          cell.reqPerSec.push(r.reqPerSec);
          cell.p50Ms.push(r.p50Ms ?? NaN);
          cell.p99Ms.push(r.p99Ms ?? NaN);
          cell.cpuSPer1000.push((used / r.requests) * 1000);
        }
      }
    }
    const rss = Object.fromEntries(running.map((s) => [s.name, rssMb(s.pid)]));
    return { path: PATH, durationS, servers: running.map((s) => s.name), cells, rssMb: rss };
  } finally {
    for (const s of running) await stopChild(s.child);
    rmSync(dir, { recursive: true, force: true });
    if (goBin) rmSync(join(goBin, '..'), { recursive: true, force: true });
  }
}

/** The Markdown table of an admission measurement. */
export function admissionTable(r: AdmissionResult): string[] {
  const cells = r.cells ?? [];
  const servers = r.servers ?? ['ours'];
  return [
    '| server | connections | admissions/s | p50 ms | p99 ms | CPU-s per 1,000 | RSS MB |',
    '|---|---|---|---|---|---|---|',
    ...cells.map(
      (c) =>
        `| ${c.server ?? 'ours'} | ${c.conns} | ${stat(c.reqPerSec, 0)} | ${stat(c.p50Ms, 3)} | ${stat(c.p99Ms, 2)} | ${c.cpuSPer1000 ? stat(c.cpuSPer1000, 3) : '–'} | ${r.rssMb?.[c.server ?? 'ours']?.toFixed(0) ?? '–'} |`,
    ),
    ...(servers.length > 1 ? ratioRows(r) : []),
  ];
}

/** ours ÷ each floor, per connection count (medians). */
function ratioRows(r: AdmissionResult): string[] {
  const by = (server: string, conns: number) => r.cells.find((c) => c.server === server && c.conns === conns);
  const rows: string[] = [];
  for (const peer of r.servers.filter((s) => s !== 'ours')) {
    for (const conns of [...new Set(r.cells.map((c) => c.conns))]) {
      const a = by('ours', conns);
      const b = by(peer, conns);
      if (!a || !b) continue;
      const ratio = (f: (c: AdmissionCell) => number[], d = 2) => (median(f(a)) / median(f(b))).toFixed(d);
      rows.push(
        `| ours ÷ ${peer} | ${conns} | ${ratio((c) => c.reqPerSec)} | ${ratio((c) => c.p50Ms)} | ${ratio((c) => c.p99Ms)} | ${ratio((c) => c.cpuSPer1000)} | ${(r.rssMb.ours / r.rssMb[peer]).toFixed(2)} |`,
      );
    }
  }
  return rows;
}
