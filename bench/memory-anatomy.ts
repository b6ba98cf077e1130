/**
 * `npm run bench:memory-anatomy [-- flags]`: where a 10k-series server's memory goes. Starts
 * bench/servers/anatomy.ts (our server built step by step, the real filter against the embedded authority, the API
 * config read from a kubeconfig file as a manager does) under `--trace-gc --expose-gc`, pinned to CPU 0, and prints
 * a Markdown report: RSS (anonymous and file-backed), V8 heap and external memory after each start-up step, the idle
 * RSS second by second (V8's memory reducer), then one wrk load at `--conns` connections for `--seconds` (Prometheus'
 * Accept header, `--gzip` to ask for gzip), the GC trace of that load (scavenges, mark-compacts, young garbage per
 * scrape, old generation after each mark-compact, heap size), and the live JS heap by kind after a full GC.
 *
 * Flags: --n=73 (children per vector; 10 counter and 10 histogram vectors: 73 ≈ 10k lines) · --idle=15 (seconds)
 * · --seconds=5 · --conns=1 · --gzip · --node-args="…" (extra V8/Node flags for the server, e.g. the semi-space size).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { kubeconfigFor } from '../packages/ctrlmetrics/src/kube/config.js';
import { makeCert, removeDir } from './lib/certs.js';
import { spawnTracked, stopAll, stopChild } from './lib/children.js';
import { isYoungGc, parseGcLine, type GcEvent } from './lib/gc-trace.js';
import { PROMETHEUS_ACCEPT } from './lib/matrix.js';
import { libEnv, prepareLib } from './lib/servers.js';
import { authorizationScript, runWrk } from './lib/wrk.js';
import { startTestCluster } from '../test/helpers/cluster.js';

interface Settings {
  n: number;
  idleS: number;
  seconds: number;
  conns: number;
  gzip: boolean;
  nodeArgs: string[];
}

function parseArgs(argv: string[]): Settings {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}: see the comment at the top of bench/memory-anatomy.ts`);
    flags.set(m[1], m[2] ?? 'true');
  }
  const known = ['n', 'idle', 'seconds', 'conns', 'gzip', 'node-args'];
  for (const k of flags.keys())
    if (!known.includes(k)) throw new Error(`unknown flag --${k} (known: ${known.map((x) => `--${x}`).join(', ')})`);
  const num = (k: string, d: number) => {
    const n = Number(flags.get(k) ?? d);
    if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`--${k} needs an integer between 1 and 100000`);
    return n;
  };
  return {
    n: num('n', 73),
    idleS: num('idle', 15),
    seconds: num('seconds', 5),
    conns: num('conns', 1),
    gzip: flags.has('gzip'),
    nodeArgs: (flags.get('node-args') ?? '').split(/\s+/).filter(Boolean),
  };
}

interface Reading {
  step: string;
  rssMb: number;
  anonMb: number;
  fileMb: number;
  heapTotalMb: number;
  heapUsedMb: number;
  externalMb: number;
  arrayBuffersMb: number;
}

const fmt = (x: number, d = 1) => x.toFixed(d);

async function main(): Promise<void> {
  const s = parseArgs(process.argv.slice(2));
  const lib = await prepareLib();
  const cert = await makeCert();
  const cluster = await startTestCluster();
  try {
    const mgr = await cluster.managerConfig();
    const readerToken = await cluster.readerToken();
    const kubeconfig = join(cert.dir, 'anatomy-kubeconfig.yaml');
    writeFileSync(kubeconfig, toYaml(kubeconfigFor({ server: mgr.server, caPem: String(mgr.ca), token: mgr.token! })), {
      mode: 0o600,
    });
    const args = [
      '-c',
      '0',
      process.execPath,
      '--trace-gc',
      '--expose-gc',
      ...s.nodeArgs,
      lib.script('servers/anatomy.ts'),
    ];
    const child = spawnTracked('taskset', args, {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        CTRLMETRICS_LOG_LEVEL: 'error',
        ...libEnv(lib),
        K: '10',
        N: String(s.n),
        CERT_DIR: cert.dir,
        MANAGER_KUBECONFIG: kubeconfig,
        IDLE_S: String(s.idleS),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const steps: Reading[] = [];
    const idle: Array<Reading & { s: number }> = [];
    const gcDuringLoad: GcEvent[] = [];
    let loading = false;
    let heap: { totalMb: number; top: Array<{ kind: string; kb: number }> } | undefined;
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    const ready = new Promise<number>((resolve, reject) => {
      let buf = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.startsWith('STEP ')) steps.push(JSON.parse(line.slice(5)) as Reading);
          else if (line.startsWith('IDLE ')) idle.push(JSON.parse(line.slice(5)) as Reading & { s: number });
          else if (line.startsWith('READY ')) resolve((JSON.parse(line.slice(6)) as { port: number }).port);
          else if (line.startsWith('HEAP ')) heap = JSON.parse(line.slice(5)) as typeof heap;
          else if (loading) {
            const ev = parseGcLine(line);
            if (ev) gcDuringLoad.push(ev);
          }
        }
      });
      child.once('exit', (code) =>
        reject(new Error(`the anatomy server exited (${code}) before it was ready:\n${stderr}`)),
      );
    });
    const port = await ready;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    loading = true;
    const wrk = await runWrk({
      url: `https://127.0.0.1:${port}/metrics`,
      connections: s.conns,
      durationS: s.seconds,
      headers: { Accept: PROMETHEUS_ACCEPT, ...(s.gzip ? { 'Accept-Encoding': 'gzip' } : {}) },
      script: authorizationScript(cert.dir, 'anatomy', `Bearer ${readerToken}`),
      cpu: '1',
    });
    loading = false;
    child.kill('SIGUSR2');
    const deadline = setTimeout(() => void stopChild(child), 60_000);
    await exited;
    clearTimeout(deadline);
    if (wrk.non2xx || Object.values(wrk.socketErrors).some((n) => n > 0))
      throw new Error(`the load had errors: ${JSON.stringify(wrk)}`);

    const out: string[] = [];
    out.push(
      `## Memory anatomy: 10 counter + 10 histogram vectors × ${s.n} children, Node ${process.version}${s.nodeArgs.length ? `, ${s.nodeArgs.join(' ')}` : ''}`,
    );
    out.push('');
    out.push(`    npm run bench:memory-anatomy -- ${process.argv.slice(2).join(' ')}`);
    out.push('');
    out.push('| step | RSS | anonymous | file-backed | V8 heap committed / used | external (ArrayBuffers) |');
    out.push('|---|---|---|---|---|---|');
    const row = (r: Reading) =>
      `| ${r.step} | ${fmt(r.rssMb)} | ${fmt(r.anonMb)} | ${fmt(r.fileMb)} | ${fmt(r.heapTotalMb)} / ${fmt(r.heapUsedMb)} | ${fmt(r.externalMb)} (${fmt(r.arrayBuffersMb)}) |`;
    const startSteps = steps.filter((r) => !r.step.startsWith('after the load'));
    for (const r of startSteps) out.push(row(r));
    for (const r of idle.filter((x) => x.s === 1 || x.s % 5 === 0 || x.s === s.idleS)) out.push(row(r));
    for (const r of steps.filter((x) => x.step.startsWith('after the load'))) out.push(row(r));
    out.push('');
    const scav = gcDuringLoad.filter(isYoungGc);
    const full = gcDuringLoad.filter((e) => !isYoungGc(e));
    const freedByScavenges = scav.reduce((a, e) => a + (e.beforeMb - e.afterMb), 0);
    const oldAfterFull = full.map((e) => e.afterMb).sort((a, b) => a - b);
    const committed = gcDuringLoad.map((e) => e.committedAfterMb);
    out.push(
      `Load: wrk ${s.conns} connection(s), ${s.seconds} s, ${s.gzip ? 'gzip' : 'plain'}: ${wrk.requests} scrapes (${fmt(wrk.reqPerSec)} req/s).`,
    );
    out.push('');
    out.push('| GC during the load (`--trace-gc`) | |');
    out.push('|---|---|');
    out.push(`| scavenges / mark-compacts | ${scav.length} / ${full.length} |`);
    out.push(
      `| young garbage freed by scavenges per scrape | ${wrk.requests ? fmt(freedByScavenges / wrk.requests, 2) : '–'} MB |`,
    );
    out.push(
      `| heap used after each mark-compact (min–max) | ${oldAfterFull.length ? `${fmt(oldAfterFull[0])}–${fmt(oldAfterFull[oldAfterFull.length - 1])}` : '–'} MB |`,
    );
    out.push(
      `| heap committed (min–max over the load) | ${committed.length ? `${fmt(Math.min(...committed))}–${fmt(Math.max(...committed))}` : '–'} MB |`,
    );
    out.push('');
    if (heap) {
      out.push(`Live JS heap after the load and a full GC: ${fmt(heap.totalMb, 2)} MB.`);
      out.push('');
      out.push('| kind | KB |');
      out.push('|---|---|');
      for (const t of heap.top) out.push(`| ${t.kind} | ${t.kb} |`);
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await stopAll();
    await cluster.stop();
    removeDir(cert.dir);
  }
}

await main();
