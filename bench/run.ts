/**
 * `npm run bench [-- --quick]`: this project's /metrics endpoint side by side with Go's client_golang promhttp and
 * plain prom-client + node:https, over HTTPS on 127.0.0.1, servers pinned to CPU 0 and wrk to CPU 1, variants
 * alternated, medians of the repetitions; then the micro-benchmarks. Writes bench/results/<date>/{results.json,report.md}
 * and prints the report. Never a pass/fail test: it measures and reports, the targets are read in docs/benchmarks.md.
 *
 * Flags: --quick (smoke: 1k+10k, 1 repetition, short runs) · --sizes=1k,10k,100k · --conns=8,1 · --reps=N
 * · --c8=S and --c1=S (run seconds) · --warmup=S · --no-micro · --micro-only · --no-pin
 * · --peers=go,prom-client,ours · --variants=ours,ours-nofilter,ours-control (measure only these variant keys;
 * ours-control, the A/A control of the filter-cost baseline, runs only when named here) · --no-footprint (skip
 * the start-up cells: import time and RSS, the quick-start manager's time to its first scrape; see
 * bench/lib/footprint.ts) · --no-admission / --admission-only (the example defaulter's admission requests/s and
 * latency at 1 and 8 connections; bench/lib/admission.ts) · --no-failover / --failover-only (a leader killed → the
 * standby's first reconcile over 10k cached objects, with and without warm-up; bench/lib/failover.ts)
 * · --no-controller / --controller-only (the reconcile path: a manager annotating 2k and 10k cached ConfigMaps with
 * one and four workers, its CPU, throughput and RSS; against the cluster CTRLMETRICS_TEST_KUBECONFIG names, else the
 * embedded authority; bench/lib/controller.ts) · --no-sharding / --sharding-only (1, 2 and 3 shards' aggregate reconciles/s
 * for a latency-bound and a CPU-bound reconcile, each shard's heap against one manager's at 30k objects, the
 * sharder's RSS; bench/lib/sharding.ts).
 * Environment: CTRLMETRICS_BENCH_FROM=src (library from src/ via tsx instead of dist/), CTRLMETRICS_BENCH_CPU_PROF=DIR
 * (our server writes a V8 CPU profile there), CTRLMETRICS_BENCH_PEERS (peers directory, default ../shared/bench),
 * CTRLMETRICS_BENCH_ADMISSION_BEFORE / CTRLMETRICS_BENCH_CONTROLLER_BEFORE=<a built checkout> (that tree's library
 * measured beside this one's in the same alternated admission or controller runs).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { makeCert, removeDir, type BenchCert } from './lib/certs.js';
import { runCapture, stopAll } from './lib/children.js';
import { machineInfo } from './lib/machine.js';
import {
  cellKey,
  orderFor,
  requestHeaders,
  SIZES,
  TEXT_ACCEPT,
  PROMETHEUS_ACCEPT,
  PROTOBUF_ACCEPT,
  variants,
  type Encoding,
  type SizeName,
  type Variant,
} from './lib/matrix.js';
import { measure, type RunRecord } from './lib/measure.js';
import { memoryMb } from './lib/proc.js';
import {
  renderReport,
  type AuthCheck,
  type BenchResults,
  type LintCheck,
  type MicroResult,
  type ScrapeCheck,
} from './lib/report.js';
import { countSampleLines, scrape } from './lib/scrape.js';
import {
  buildGoPeer,
  libEnv,
  prepareLib,
  REPO_ROOT,
  startGo,
  startOurs,
  startPromClient,
  type ManagerAccess,
  type PreparedLib,
  type RunningServer,
} from './lib/servers.js';
import { runWrk } from './lib/wrk.js';
import { measureFootprint, type FootprintResult } from './lib/footprint.js';
import { measureAdmission, type AdmissionResult } from './lib/admission.js';
import { measureFailover, type FailoverResult } from './lib/failover.js';
import { measureSharding, type ShardingResult } from './lib/sharding.js';
import {
  buildControllerGoFloor,
  measureController,
  measureRequestFloor,
  type ControllerResult,
  type ControllerTarget,
} from './lib/controller.js';
import { startTestCluster, type TestCluster } from '../test/helpers/cluster.js';

const SERVER_CPU = '0';
const LOAD_CPU = '1';

interface Settings {
  quick: boolean;
  sizes: SizeName[];
  conns: number[];
  encodings: Encoding[];
  reps: number;
  c8: number;
  c1: number;
  warmup: number;
  micro: boolean;
  load: boolean;
  /** The start-up cells (fresh processes). */
  footprint: boolean;
  /** The example defaulter's admission throughput and latency. */
  admission: boolean;
  /** Failover with and without warm replicas. */
  failover: boolean;
  /** The reconcile path's cost. */
  controller: boolean;
  /** The scaling sharding buys. */
  sharding: boolean;
  pin: boolean;
  /** Which peers run: go, prom-client, ours (ours = the ours, ours-text, ours-nofilter and ours-control variants). */
  peers: string[];
  /** Variant keys to measure (default all of the running peers'). */
  only: string[] | undefined;
}

function parseArgs(argv: string[]): Settings {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}: see the comment at the top of bench/run.ts`);
    flags.set(m[1], m[2] ?? 'true');
  }
  const known = [
    'quick',
    'sizes',
    'conns',
    'reps',
    'c8',
    'c1',
    'warmup',
    'no-micro',
    'micro-only',
    'no-pin',
    'peers',
    'variants',
    'no-footprint',
    'no-admission',
    'admission-only',
    'no-failover',
    'failover-only',
    'no-controller',
    'controller-only',
    'no-sharding',
    'sharding-only',
  ];
  for (const k of flags.keys())
    if (!known.includes(k)) throw new Error(`unknown flag --${k} (known: ${known.map((x) => `--${x}`).join(', ')})`);
  const quick = flags.has('quick');
  const onlyFlags = ['micro-only', 'admission-only', 'failover-only', 'controller-only', 'sharding-only'].filter((f) =>
    flags.has(f),
  );
  if (onlyFlags.length > 1) throw new Error(`${onlyFlags.map((f) => `--${f}`).join(' and ')} exclude each other`);
  /** Whether another part than the allowed ones was singled out (--X-only). */
  const only = (...allowed: string[]) => onlyFlags.length > 0 && !allowed.includes(onlyFlags[0]);
  const num = (k: string, d: number) => {
    const v = flags.get(k);
    if (v === undefined) return d;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${k} needs a positive number`);
    return n;
  };
  const sizes = (flags.get('sizes') ?? (quick ? '1k,10k' : '1k,10k,100k')).split(',') as SizeName[];
  for (const s of sizes) if (!(s in SIZES)) throw new Error(`unknown size ${s}: use ${Object.keys(SIZES).join(', ')}`);
  const conns = (flags.get('conns') ?? '8,1').split(',').map(Number);
  if (conns.some((c) => !Number.isInteger(c) || c < 1 || c > 64)) throw new Error('--conns: integers between 1 and 64');
  return {
    quick,
    sizes,
    conns,
    encodings: ['plain', 'gzip'],
    reps: Math.floor(num('reps', quick ? 1 : 3)),
    c8: num('c8', quick ? 2 : 5),
    c1: num('c1', quick ? 1 : 3),
    warmup: num('warmup', quick ? 1 : 2),
    micro: !flags.has('no-micro') && !only('micro-only'),
    load: !only(),
    footprint: !only() && !flags.has('no-footprint'),
    admission: !only('admission-only') && !flags.has('no-admission'),
    failover: !only('failover-only') && !flags.has('no-failover'),
    controller: !only('controller-only') && !flags.has('no-controller'),
    sharding: !only('sharding-only') && !flags.has('no-sharding'),
    pin: !flags.has('no-pin'),
    peers: (flags.get('peers') ?? 'go,prom-client,ours').split(','),
    only: flags.get('variants')?.split(','),
  };
}

/** The controller benchmark's API server: the cluster CTRLMETRICS_TEST_KUBECONFIG names, else the embedded authority. */
async function controllerTarget(cluster: TestCluster): Promise<ControllerTarget> {
  const { KubeClient, loadRestConfig } = await import('../packages/ctrlmetrics/src/index.js');
  const kubeconfig = process.env.CTRLMETRICS_TEST_KUBECONFIG;
  const restConfig = kubeconfig ? await loadRestConfig({ kubeconfig }) : cluster.authority.restConfig;
  return {
    label: kubeconfig ? `the cluster at ${restConfig.server}` : "the embedded authority (in the benchmark's process)",
    restConfig,
    admin: new KubeClient({ ...restConfig, qps: -1 }),
  };
}

const started = Date.now();
function progress(msg: string): void {
  process.stderr.write(`[bench +${Math.round((Date.now() - started) / 1000)}s] ${msg}\n`);
}

/** How long the servers sit unscraped before the settled idle RSS is read. */
const IDLE_SETTLE_MS = 15_000;

type Servers = Partial<Record<Variant['server'], RunningServer>>;

async function startServers(
  lib: PreparedLib,
  goBin: string | undefined,
  size: SizeName,
  cert: BenchCert,
  auth: { access: ManagerAccess; readerToken: string },
  s: Settings,
): Promise<Servers> {
  const shape = { k: 10, n: SIZES[size] };
  const cpu = s.pin ? SERVER_CPU : undefined;
  const servers: Servers = {};
  try {
    // one at a time: they all start on the same core
    if (goBin) servers.go = await startGo(goBin, shape, cert, cpu);
    if (s.peers.includes('prom-client')) servers['prom-client'] = await startPromClient(lib, shape, cert, cpu);
    if (s.peers.includes('ours')) {
      const ours = await startOurs(lib, shape, cert, auth, cpu);
      servers.ours = ours.ours;
      servers['ours-nofilter'] = ours.baseline;
      servers['ours-control'] = ours.control;
    }
    return servers;
  } catch (e) {
    await stopServers(servers);
    throw e;
  }
}

async function stopServers(servers: Servers): Promise<void> {
  await Promise.all(Object.values(servers).map((x) => x.stop()));
}

function activeVariants(servers: Servers, conns: readonly number[], only: string[] | undefined): Variant[] {
  return variants(conns).filter((v) => servers[v.server] !== undefined && (only ? only.includes(v.key) : !v.optIn));
}

/** Run length: at 100k a c8 scrape of the slower peers takes seconds, so those runs are longer (×1.6) to complete enough requests. */
function runSeconds(s: Settings, size: SizeName, conns: number): number {
  const base = conns >= 8 ? s.c8 : s.c1;
  return size === '100k' ? Math.round(base * 1.6) : base;
}

async function promtool(body: string): Promise<{ rc: number | null; findings: string[] }> {
  const r = await runCapture('promtool', ['check', 'metrics'], { input: body, timeoutMs: 120_000 });
  const findings = (r.stdout + r.stderr)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return { rc: r.code, findings };
}

/** The one-off checks at one size: a scrape per variant and encoding, promtool on the text outputs, the filter's answers. */
async function checkServers(
  size: SizeName,
  servers: Servers,
  cert: BenchCert,
  scrapes: ScrapeCheck[],
  lint: LintCheck[],
  auth: AuthCheck[],
): Promise<void> {
  for (const v of variants([8])) {
    const server = servers[v.server];
    if (!server || v.optIn) continue;
    for (const enc of ['plain', 'gzip'] as Encoding[]) {
      const r = await scrape(
        server.url,
        { ...requestHeaders(v, enc), Authorization: server.authorization },
        cert.certPem,
        120_000,
      );
      scrapes.push({
        size,
        variant: v.key,
        enc,
        status: r.status,
        contentType: String(r.headers['content-type'] ?? ''),
        contentEncoding: String(r.headers['content-encoding'] ?? ''),
        wireBytes: r.wireBytes,
        sampleLines: countSampleLines(r.body),
        ms: r.ms,
      });
      if (r.status !== 200) throw new Error(`${v.key} answered ${r.status} at ${size} ${enc}: ${r.body.slice(0, 300)}`);
      if (
        v.accept === PROTOBUF_ACCEPT &&
        !String(r.headers['content-type']).startsWith('application/vnd.google.protobuf')
      ) {
        throw new Error(`${v.key} answered ${String(r.headers['content-type'])} to the protobuf Accept header`);
      }
      if (enc === 'plain' && v.accept === TEXT_ACCEPT) lint.push({ size, variant: v.key, ...(await promtool(r.body)) });
      if (enc === 'plain' && (v.key === 'go' || v.key === 'prom-client'))
        lint.push({ size, variant: v.key, ...(await promtool(r.body)) });
    }
  }
  const ours = servers.ours;
  if (!ours) return;
  const status = async (authorization?: string) =>
    (
      await scrape(
        ours.url,
        { Accept: PROMETHEUS_ACCEPT, ...(authorization ? { Authorization: authorization } : {}) },
        cert.certPem,
        30_000,
      )
    ).status;
  auth.push({
    size,
    noToken: await status(),
    wrongToken: await status('Bearer not-a-valid-token'),
    reader: await status(ours.authorization),
  });
}

async function warmUp(servers: Servers, s: Settings): Promise<void> {
  for (const server of Object.values(servers)) {
    for (const enc of s.encodings) {
      await runWrk({
        url: server.url,
        connections: 8,
        durationS: s.warmup,
        headers: { Accept: PROMETHEUS_ACCEPT, ...(enc === 'gzip' ? { 'Accept-Encoding': 'gzip' } : {}) },
        script: server.wrkScript,
        cpu: s.pin ? LOAD_CPU : undefined,
      });
    }
  }
}

async function runMicro(
  lib: PreparedLib,
  s: Settings,
  accessFile: string | undefined,
  tokenFile: string | undefined,
): Promise<MicroResult> {
  const args = [...lib.nodeArgs, lib.script('micro/micro.ts')];
  const [cmd, full] = s.pin ? ['taskset', ['-c', SERVER_CPU, process.execPath, ...args]] : [process.execPath, args];
  const env = {
    ...process.env,
    NODE_OPTIONS: '',
    CTRLMETRICS_LOG_LEVEL: 'warn',
    ...libEnv(lib),
    QUICK: s.quick ? '1' : '0',
    ...(accessFile ? { MANAGER_ACCESS_FILE: accessFile } : {}),
    ...(tokenFile ? { READER_TOKEN_FILE: tokenFile } : {}),
  };
  const r = await runCapture(cmd, full, { env, timeoutMs: 600_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('MICRO '));
  if (r.code !== 0 || !line)
    throw new Error(
      `micro-benchmarks failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}):\n${r.stderr.slice(-3000)}`,
    );
  return JSON.parse(line.slice(6)) as MicroResult;
}

async function main(): Promise<void> {
  const s = parseArgs(process.argv.slice(2));
  const { createRequire } = await import('node:module');
  const promClientVersion = (createRequire(import.meta.url)('prom-client/package.json') as { version: string }).version;
  const machine = await machineInfo(promClientVersion);
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  progress(
    `${command}: sizes ${s.sizes.join(',')}, conns ${s.conns.join(',')}, ${s.reps} rep(s), c8 ${s.c8}s, c1 ${s.c1}s, pinned ${s.pin}`,
  );

  const runs: RunRecord[] = [];
  const scrapes: ScrapeCheck[] = [];
  const lint: LintCheck[] = [];
  const authChecks: AuthCheck[] = [];
  const idleRssMb: Record<string, Record<string, number>> = {};
  const startRssMb: Record<string, Record<string, number>> = {};
  const settledRssMb: Record<string, Record<string, number>> = {};
  const cleanup: Array<() => Promise<void> | void> = [];
  let micro: MicroResult | undefined;
  let footprint: FootprintResult | undefined;
  let admission: AdmissionResult | undefined;
  let failover: FailoverResult | undefined;
  let sharding: ShardingResult | undefined;
  let controller: ControllerResult | undefined;
  try {
    const lib = await prepareLib();
    cleanup.push(() => rmSync(dirname(lib.script('servers/eld-probe.ts')), { recursive: true, force: true }));
    const cert = await makeCert();
    cleanup.push(() => removeDir(cert.dir));
    progress('starting the embedded authority (manager identity + reader token)');
    const cluster: TestCluster = await startTestCluster();
    cleanup.push(() => cluster.stop());
    const mgr = await cluster.managerConfig();
    const access: ManagerAccess = { server: mgr.server, caPem: String(mgr.ca), token: mgr.token! };
    const readerToken = await cluster.readerToken();
    const accessFile = join(cert.dir, 'micro-access.json');
    const tokenFile = join(cert.dir, 'reader.token');
    writeFileSync(accessFile, JSON.stringify(access), { mode: 0o600 });
    writeFileSync(tokenFile, readerToken, { mode: 0o600 });

    if (s.load) {
      progress('building the Go promhttp peer');
      const goBin = s.peers.includes('go') ? await buildGoPeer() : undefined;
      if (goBin) cleanup.push(() => rmSync(dirname(goBin), { recursive: true, force: true }));
      for (const size of s.sizes) {
        progress(`${size}: starting servers (K=10, N=${SIZES[size]})`);
        const servers = await startServers(lib, goBin, size, cert, { access, readerToken }, s);
        // ours-nofilter and ours-control are listeners of the ours process: their memory is ours'
        const rssOfEach = () =>
          Object.fromEntries(
            Object.entries(servers)
              .filter(([k]) => k !== 'ours-nofilter' && k !== 'ours-control')
              .map(([k, v]) => [k, memoryMb(v.pid).rssMb]),
          );
        try {
          // the idle memory figure: registry filled, listening, no scrape yet; read 1 s after start, and again once
          // V8's memory reducer has run (its first full GC comes ≈8 s after start and shrinks the young generation
          // the start-up grew; Go's scavenger likewise returns memory in the background)
          await new Promise((r) => setTimeout(r, 1000));
          startRssMb[size] = rssOfEach();
          await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS - 1000));
          settledRssMb[size] = rssOfEach();
          await checkServers(size, servers, cert, scrapes, lint, authChecks);
          idleRssMb[size] = rssOfEach();
          progress(`${size}: warm-up`);
          await warmUp(servers, s);
          const vs = activeVariants(servers, s.conns, s.only);
          for (let rep = 0; rep < s.reps; rep++) {
            for (const enc of s.encodings) {
              for (const conns of s.conns) {
                const order = orderFor(
                  vs.filter((v: Variant) => v.conns.includes(conns)),
                  rep,
                );
                for (const v of order) {
                  const rec = await measure(
                    servers[v.server]!,
                    {
                      connections: conns,
                      durationS: runSeconds(s, size, conns),
                      headers: requestHeaders(v, enc),
                      cpu: s.pin ? LOAD_CPU : undefined,
                    },
                    { variant: v.key, size, enc, conns, rep },
                  );
                  runs.push(rec);
                  if (rec.errors) progress(`  INVALID ${v.key} ${cellKey(size, enc, conns)}: ${rec.errors}`);
                }
                const last = runs.slice(-order.length);
                progress(
                  `${size} ${enc} c${conns} rep ${rep}: ${last.map((r) => `${r.variant} ${r.reqPerSec.toFixed(1)}`).join(', ')} req/s`,
                );
              }
            }
          }
        } finally {
          await stopServers(servers);
        }
      }
    }
    if (s.footprint) {
      const reps = s.quick ? 3 : 10;
      progress(`footprint: ${reps} fresh processes of each kind`);
      footprint = await measureFootprint(cluster, reps, s.pin);
    }
    if (s.admission) {
      const seconds = s.quick ? 2 : 10;
      progress(
        `admission: the example defaulter (ours, bare node:https, Go net/http) at 1 and 8 connections, ${s.reps} rep(s) of ${seconds} s`,
      );
      admission = await measureAdmission(cluster, lib, [1, 8], s.reps, seconds, s.pin);
    }
    if (s.failover) {
      const objects = s.quick ? 2_000 : 10_000;
      progress(`failover: ${objects} cached objects, ${s.reps} rep(s), cold and warm standby`);
      failover = await measureFailover(cluster, objects, s.reps, s.pin, progress);
    }
    if (s.sharding) {
      const o = s.quick
        ? { objects: 300, memoryObjects: 3_000, reps: 1, windowS: 3, pin: s.pin }
        : { objects: 1_000, memoryObjects: 30_000, reps: s.reps, windowS: 5, pin: s.pin };
      progress(
        `sharding: ${o.objects} objects on 1, 2, 3 shards (latency- and CPU-bound), ${o.reps} rep(s); memory at ${o.memoryObjects}`,
      );
      sharding = await measureSharding(cluster, o, progress);
    }
    if (s.controller) {
      const target = await controllerTarget(cluster);
      cleanup.push(() => target.admin.close());
      const sizes = s.quick ? [500, 2_000] : [2_000, 10_000];
      progress(
        `controller: against ${target.label}, ${sizes.join(' and ')} objects, 1 and 4 workers, ${Math.max(2, s.reps)} rep(s)`,
      );
      const goFloor = await buildControllerGoFloor();
      if (goFloor) cleanup.push(() => rmSync(dirname(goFloor), { recursive: true, force: true }));
      else progress('controller: no Go toolchain: the Go floor is left out');
      controller = await measureController(lib, target, sizes, [1, 4], Math.max(2, s.reps), s.pin, progress, goFloor);
      progress('controller: the request floor (KubeClient against bare node:https)');
      controller.floor = await measureRequestFloor(lib, target, s.pin);
    }
    if (s.micro) {
      progress('micro-benchmarks');
      micro = await runMicro(lib, s, accessFile, tokenFile);
    }
  } finally {
    for (const f of cleanup.reverse()) {
      try {
        await f();
      } catch (e) {
        progress(`cleanup: ${(e as Error).message}`);
      }
    }
    await stopAll();
  }

  const results: BenchResults = {
    machine,
    command,
    mode: s.quick ? 'quick' : 'full',
    settings: {
      sizes: s.load ? s.sizes : [],
      conns: s.conns,
      encodings: s.encodings,
      reps: s.reps,
      c8DurationS: s.c8,
      c1DurationS: s.c1,
      warmupS: s.warmup,
      pinned: s.pin,
    },
    runs,
    idleRssMb,
    startRssMb,
    settledRssMb,
    footprint,
    ...(admission ? { admission } : {}),
    ...(failover ? { failover } : {}),
    ...(sharding ? { sharding } : {}),
    ...(controller ? { controller } : {}),
    scrapes,
    lint,
    auth: authChecks,
    ...(micro ? { micro } : {}),
    elapsedS: (Date.now() - started) / 1000,
    loadAvgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
  };
  const dir = join(REPO_ROOT, 'bench', 'results', machine.date.replace(/[:.]/g, '-'));
  mkdirSync(dir, { recursive: true });
  const report = renderReport(results);
  writeFileSync(join(dir, 'results.json'), JSON.stringify(results, null, 2));
  writeFileSync(join(dir, 'report.md'), report);
  process.stdout.write(report + '\n');
  progress(`done in ${Math.round(results.elapsedS)} s; results in ${dir}`);
}

main().catch(async (e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  await stopAll();
  process.exit(1);
});
