/**
 * Starting the servers under test, each pinned to the server core: the Go promhttp peer and the prom-client peer
 * (both run read-only from /work/shared/bench, never copied), and this project's endpoint (bench/servers/ours.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { runCapture, spawnTracked, stopChild } from './children.js';
import type { BenchCert } from './certs.js';
import { freePort } from './ports.js';
import { waitListening } from './scrape.js';
import { authorizationScript } from './wrk.js';
import { stringify as toYaml } from 'yaml';
import { kubeconfigFor } from '../../packages/ctrlmetrics/src/kube/config.js';
import { MANAGER_NODE_OPTIONS } from '../../packages/cli/src/scaffold/templates/config-manager.js';

/**
 * V8/Node flags of our servers: the generated manager.yaml's `NODE_OPTIONS` (ours as a scaffolded project runs it),
 * or CTRLMETRICS_BENCH_OURS_NODE_ARGS when set (empty: Node's defaults).
 */
export const OURS_NODE_ARGS: readonly string[] = (process.env.CTRLMETRICS_BENCH_OURS_NODE_ARGS ?? MANAGER_NODE_OPTIONS)
  .split(/\s+/)
  .filter(Boolean);

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PEERS_DIR = process.env.CTRLMETRICS_BENCH_PEERS ?? resolve(REPO_ROOT, '..', 'shared', 'bench');

/** Synthetic registry shape shared by every server: K counter vectors + K histogram vectors, N children each. */
export interface RegistryShape {
  k: number;
  n: number;
}

/** Event-loop delay over one measured interval (the Node servers report it; Go has no event loop). */
export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  count: number;
  /** Our filtered listener only: time spent in the filter per request, over the same window (bench/servers/ours.ts). */
  filter?: { requests: number; meanUs: number | null; medianUs: number | null; maxUs: number };
}

/** A running server. */
export interface RunningServer {
  key: string;
  pid: number;
  url: string;
  /** Authorization header value the server accepts. */
  authorization: string;
  /** wrk Lua script that sends `authorization` (the value stays off wrk's command line). */
  wrkScript: string;
  child: ChildProcess;
  /** Present for the Node servers: start/stop an event-loop-delay measurement window. */
  eld?: { start(): Promise<void>; stop(): Promise<EventLoopDelay> };
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;

function pinned(cpu: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return cpu !== undefined ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
}

function collectStderr(child: ChildProcess): () => string {
  let buf = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    buf = (buf + d).slice(-4000);
  });
  return () => buf;
}

async function ready(key: string, child: ChildProcess, url: string, stderr: () => string): Promise<void> {
  try {
    await waitListening(url, READY_TIMEOUT_MS, () => child.exitCode === null && child.signalCode === null);
  } catch (e) {
    await stopChild(child);
    throw new Error(`${key}: ${(e as Error).message}\n--- stderr ---\n${stderr()}`, { cause: e });
  }
}

/** Builds the Go peer into a temporary directory (GOPATH mode with Debian's client_golang). Returns the binary path. */
export async function buildGoPeer(): Promise<string> {
  const src = join(PEERS_DIR, 'go-promhttp');
  if (!existsSync(join(src, 'server.go'))) throw new Error(`Go peer not found at ${src}`);
  const bin = join(mkdtempSync(join(tmpdir(), 'ctrlmetrics-bench-go-')), 'go-promhttp');
  const env = { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off', GOFLAGS: '' };
  const r = await runCapture('go', ['build', '-o', bin, 'server.go'], { cwd: src, env, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`go build of the Go peer failed:\n${r.stderr}`);
  return bin;
}

/**
 * Builds one of this repository's Go floors (bench/servers/<name>/main.go, Go's standard library only) into a
 * temporary directory; undefined when no Go toolchain is installed.
 */
export async function buildGoFloor(name: string): Promise<string | undefined> {
  const which = await runCapture('sh', ['-c', 'command -v go'], { timeoutMs: 5_000 });
  if (which.code !== 0) return undefined;
  const bin = join(mkdtempSync(join(tmpdir(), `ctrlmetrics-bench-${name}-`)), name);
  const env = { ...process.env, GO111MODULE: 'off', GOFLAGS: '' };
  const r = await runCapture('go', ['build', '-o', bin, 'main.go'], {
    cwd: join(REPO_ROOT, 'bench/servers', name),
    env,
    timeoutMs: 300_000,
  });
  if (r.code !== 0) throw new Error(`go build of bench/servers/${name} failed:\n${r.stderr}`);
  return bin;
}

export const PEER_TOKEN = 'secret-token';

/** Starts the Go promhttp peer (GOMAXPROCS=1 when pinned). */
export async function startGo(
  bin: string,
  shape: RegistryShape,
  cert: BenchCert,
  cpu?: string,
): Promise<RunningServer> {
  const port = await freePort();
  const [cmd, args] = pinned(cpu, bin, [
    '-port',
    String(port),
    '-k',
    String(shape.k),
    '-n',
    String(shape.n),
    '-cert',
    cert.certFile,
    '-key',
    cert.keyFile,
  ]);
  const env = { ...process.env, ...(cpu !== undefined ? { GOMAXPROCS: '1' } : {}) };
  const child = spawnTracked(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr = collectStderr(child);
  const url = `https://127.0.0.1:${port}/metrics`;
  const authorization = `Bearer ${PEER_TOKEN}`;
  await ready('go', child, url, stderr);
  const wrkScript = authorizationScript(cert.dir, 'go', authorization);
  return { key: 'go', pid: child.pid!, url, authorization, wrkScript, child, stop: () => stopChild(child) };
}

/** Starts the prom-client + node:https peer (with the event-loop probe preloaded), resolving prom-client from this project's node_modules. */
export async function startPromClient(
  lib: PreparedLib,
  shape: RegistryShape,
  cert: BenchCert,
  cpu?: string,
): Promise<RunningServer> {
  const port = await freePort();
  const script = join(PEERS_DIR, 'prom-client-baseline', 'server.cjs');
  const [cmd, args] = pinned(cpu, process.execPath, ['--import', lib.probe, script]);
  const env = {
    ...process.env,
    NODE_PATH: join(REPO_ROOT, 'node_modules'),
    NODE_OPTIONS: '',
    PORT: String(port),
    K: String(shape.k),
    N: String(shape.n),
    CERT: cert.certFile,
    KEY: cert.keyFile,
  };
  const child = spawnTracked(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collectStderr(child);
  const eld = eventLoopChannel(child);
  const url = `https://127.0.0.1:${port}/metrics`;
  const authorization = `Bearer ${PEER_TOKEN}`;
  await ready('prom-client', child, url, stderr);
  const wrkScript = authorizationScript(cert.dir, 'prom-client', authorization);
  return {
    key: 'prom-client',
    pid: child.pid!,
    url,
    authorization,
    wrkScript,
    child,
    eld,
    stop: () => stopChild(child),
  };
}

/** How our server reaches the authority, as the manager identity. */
export interface ManagerAccess {
  server: string;
  caPem: string;
  token: string;
}

/** Where the measured Node processes load this project's library from: compiled dist/ (default) or src/ via tsx. */
export interface PreparedLib {
  /** file: URL of the library root directory, with a trailing slash (dist/src/ or src/). */
  root: string;
  /** Module extension inside the root: `.js` (dist) or `.ts` (src through tsx). */
  ext: string;
  /** Extra node arguments (`--import tsx` for src). */
  nodeArgs: string[];
  /** The event-loop-delay probe, preloaded into every Node server (ours and the prom-client peer). */
  probe: string;
  /** A bench TypeScript entry (bench/servers/*.ts, bench/micro/*.ts) as a runnable script path. */
  script(rel: string): string;
}

/**
 * The measured processes run plain compiled JavaScript (no tsx loader thread in them): bench entries are
 * transpiled to temporary .mjs files that import the library from dist/ (built by `npm run bench`) or, with
 * CTRLMETRICS_BENCH_FROM=src for development, from src/ through tsx.
 */
export async function prepareLib(): Promise<PreparedLib> {
  const from = process.env.CTRLMETRICS_BENCH_FROM ?? 'dist';
  const ts = (await import('typescript')).default;
  const { readFileSync } = await import('node:fs');
  const tmp = mkdtempSync(join(tmpdir(), 'ctrlmetrics-bench-js-'));
  const transpile = (rel: string): string => {
    const source = join(REPO_ROOT, 'bench', rel);
    const out = ts.transpileModule(readFileSync(source, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: source,
    });
    const file = join(tmp, rel.replace(/[\\/]/g, '_').replace(/\.ts$/, '.mjs'));
    writeFileSync(file, out.outputText);
    return file;
  };
  const probe = pathToFileURL(transpile('servers/eld-probe.ts')).href;
  if (from === 'src') {
    return {
      root: pathToFileURL(join(REPO_ROOT, 'packages/ctrlmetrics/src')).href + '/',
      ext: '.ts',
      nodeArgs: ['--conditions=ctrlmetrics-source', '--import', 'tsx'],
      probe,
      script: transpile,
    };
  }
  const lib = join(REPO_ROOT, 'packages/ctrlmetrics/dist/src/index.js');
  if (!existsSync(lib))
    throw new Error(`${lib} is missing: run \`npm run build\` (npm run bench does) or set CTRLMETRICS_BENCH_FROM=src`);
  return {
    root: pathToFileURL(join(REPO_ROOT, 'packages/ctrlmetrics/dist/src')).href + '/',
    ext: '.js',
    nodeArgs: [],
    probe,
    script: transpile,
  };
}

/**
 * Environment that tells a transpiled bench entry where the library is, and where the examples built against it
 * are (the build compiles them to dist/examples at the repository's root, beside the packages).
 */
export function libEnv(lib: PreparedLib): Record<string, string> {
  const examples = join(REPO_ROOT, lib.ext === '.ts' ? 'examples' : join('dist', 'examples'));
  return {
    CTRLMETRICS_LIB_ROOT: lib.root,
    CTRLMETRICS_LIB_EXT: lib.ext,
    CTRLMETRICS_EXAMPLES_ROOT: pathToFileURL(examples).href + '/',
  };
}

/** Our endpoint with the filter, and the same process's listeners without it (the filter-cost baseline and the A/A control). */
export interface OursServers {
  ours: RunningServer;
  baseline: RunningServer;
  control: RunningServer;
}

/**
 * Starts our endpoint with the real filter against the authority, plus, in the same process, two listeners on the
 * same registry without the filter (baseline and control). All accept the same reader token, so the A/B requests are
 * byte for byte the same.
 */
export async function startOurs(
  lib: PreparedLib,
  shape: RegistryShape,
  cert: BenchCert,
  auth: { access: ManagerAccess; readerToken: string },
  cpu?: string,
): Promise<OursServers> {
  const port = await freePort();
  const noFilterPort = await freePort();
  const controlPort = await freePort();
  const kubeconfig = join(cert.dir, 'ours-kubeconfig.yaml');
  writeFileSync(
    kubeconfig,
    toYaml(kubeconfigFor({ server: auth.access.server, caPem: auth.access.caPem, token: auth.access.token })),
    { mode: 0o600 },
  );
  const profDir = process.env.CTRLMETRICS_BENCH_CPU_PROF;
  // one directory per server; Node names each thread's profile CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile
  const prof = profDir ? ['--cpu-prof', '--cpu-prof-dir', join(profDir, `ours-n${shape.n}`)] : [];
  const extra = OURS_NODE_ARGS;
  const [cmd, args] = pinned(cpu, process.execPath, [
    ...prof,
    ...extra,
    ...lib.nodeArgs,
    '--import',
    lib.probe,
    lib.script('servers/ours.ts'),
  ]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    ...libEnv(lib),
    CTRLMETRICS_LOG_LEVEL: 'error', // the baseline listener warns that it has no filter
    PORT: String(port),
    NOFILTER_PORT: String(noFilterPort),
    CONTROL_PORT: String(controlPort),
    K: String(shape.k),
    N: String(shape.n),
    CERT_DIR: cert.dir,
    MANAGER_KUBECONFIG: kubeconfig,
  };
  const child = spawnTracked(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collectStderr(child);
  const eld = eventLoopChannel(child);
  const authorization = `Bearer ${auth.readerToken}`;
  const url = `https://127.0.0.1:${port}/metrics`;
  const baselineUrl = `https://127.0.0.1:${noFilterPort}/metrics`;
  const controlUrl = `https://127.0.0.1:${controlPort}/metrics`;
  await ready('ours', child, url, stderr);
  await ready('ours-nofilter', child, baselineUrl, stderr);
  await ready('ours-control', child, controlUrl, stderr);
  const wrkScript = authorizationScript(cert.dir, 'ours', authorization);
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopChild(child));
  const common = { pid: child.pid!, authorization, wrkScript, child, eld, stop };
  return {
    ours: { key: 'ours', url, ...common },
    baseline: { key: 'ours-nofilter', url: baselineUrl, ...common },
    control: { key: 'ours-control', url: controlUrl, ...common },
  };
}

/**
 * The side channel of bench/servers/eld-probe.ts (preloaded into the Node servers): each SIGUSR2 toggles an event-loop-delay window; the server answers
 * on stdout with `ELD {"state":"started"}` or `ELD {"state":"stopped",...figures}`.
 */
function eventLoopChannel(child: ChildProcess): NonNullable<RunningServer['eld']> {
  const waiters: Array<(msg: Record<string, unknown>) => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('ELD ')) return;
    const msg = JSON.parse(line.slice(4)) as Record<string, unknown>;
    waiters.shift()?.(msg);
  });
  const toggle = (expect: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const waiter = (msg: Record<string, unknown>) => {
        clearTimeout(t);
        if (msg.state !== expect)
          reject(new Error(`event-loop-delay channel out of step: got ${String(msg.state)}, expected ${expect}`));
        else resolve(msg);
      };
      const t = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error('the server did not answer the event-loop-delay signal within 10 s'));
      }, 10_000);
      waiters.push(waiter);
      child.kill('SIGUSR2');
    });
  return {
    start: async () => {
      await toggle('started');
    },
    stop: async () => {
      const m = await toggle('stopped');
      const filter =
        typeof m.filterRequests === 'number' && m.filterRequests > 0
          ? {
              requests: m.filterRequests,
              meanUs: typeof m.filterMeanUs === 'number' ? m.filterMeanUs : null,
              medianUs: typeof m.filterMedianUs === 'number' ? m.filterMedianUs : null,
              maxUs: Number(m.filterMaxUs),
            }
          : undefined;
      return {
        p50Ms: Number(m.p50Ms),
        p99Ms: Number(m.p99Ms),
        maxMs: Number(m.maxMs),
        meanMs: Number(m.meanMs),
        count: Number(m.count),
        ...(filter ? { filter } : {}),
      };
    },
  };
}
