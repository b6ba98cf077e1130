/**
 * Start-up cost in fresh processes: a bare `node` against `await import('ctrlmetrics')` (resolved by
 * name through package.json's exports), and the README's quick-start manager from spawn to its first `/metrics`
 * 200 for a reader's token against an authority that is already running; and the embedded authority itself
 * (`ctrlmetrics authority`), from spawn to ready, then its first built-in write (a Deployment: the built-in types
 * and defaults load then). Used by bench/footprint.ts and by `npm run bench` (its footprint cells).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { memoryMb } from './proc.js';
import { runCapture, spawnTracked, stopChild } from './children.js';
import { REPO_ROOT } from './servers.js';
import type { TestCluster } from '../../test/helpers/cluster.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { readKubeconfig, restConfigOf, selectContext } from '../../packages/ctrlmetrics/src/kube/kubeconfig.js';

export interface FootprintResult {
  reps: number;
  pinned: boolean;
  /** Bare `node`: RSS, MB. */
  bareRssMb: number[];
  /** `await import('ctrlmetrics')`: wall time of the import, ms, and RSS right after it, MB. */
  importMs: number[];
  importRssMb: number[];
  /** The quick-start manager: spawn → first `/metrics` 200, ms, and its RSS then, MB. */
  startMs: number[];
  startRssMb: number[];
  /** `ctrlmetrics authority`: spawn → ready (listening, kubeconfig written), ms, and its RSS then, MB. */
  authorityStartMs: number[];
  authorityRssMb: number[];
  /** Its first Deployment create, ms (the built-in types and defaults load on first use), and its RSS after, MB. */
  authorityFirstWriteMs: number[];
  authorityWriteRssMb: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmtStat = (xs: number[], d = 1) =>
  `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

export const footprintMedian = median;

function nodeCommand(pin: boolean, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args];
}

/** One fresh process, bare or importing the package; the RSS is read right after the import. */
async function importOnce(pin: boolean, withImport: boolean): Promise<{ ms: number; rssMb: number }> {
  const code = `const t = performance.now(); ${withImport ? "await import('ctrlmetrics');" : ''} const ms = performance.now() - t; process.stdout.write(JSON.stringify({ ms, rssMb: process.memoryUsage().rss / 1048576 }));`;
  const [cmd, args] = nodeCommand(pin, ['--input-type=module', '-e', code]);
  const r = await runCapture(cmd, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`import run failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { ms: number; rssMb: number };
}

function status(url: string, token: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    // the manager serves a self-signed certificate here; this measures start-up, not verification
    const req = request(
      url,
      { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false, agent: false, timeout: 5_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolveStatus(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Measures `reps` of each kind, alternated; child processes pinned to CPU 0 when `pin`. */
export async function measureFootprint(cluster: TestCluster, reps: number, pin: boolean): Promise<FootprintResult> {
  const quickstart = join(REPO_ROOT, 'dist/examples/quickstart.js');
  if (!existsSync(quickstart)) throw new Error(`${quickstart} is missing: run \`npm run build\``);
  const r: FootprintResult = {
    reps,
    pinned: pin,
    bareRssMb: [],
    importMs: [],
    importRssMb: [],
    startMs: [],
    startRssMb: [],
    authorityStartMs: [],
    authorityRssMb: [],
    authorityFirstWriteMs: [],
    authorityWriteRssMb: [],
  };
  for (let i = 0; i < reps; i++) {
    r.bareRssMb.push((await importOnce(pin, false)).rssMb);
    const imported = await importOnce(pin, true);
    r.importMs.push(imported.ms);
    r.importRssMb.push(imported.rssMb);
  }
  const token = await cluster.readerToken();
  for (let i = 0; i < reps; i++) {
    const port = await freePort();
    const [cmd, args] = nodeCommand(pin, [quickstart]);
    const t0 = performance.now();
    const child = spawnTracked(cmd, args, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        KUBECONFIG: cluster.authority.kubeconfig,
        METRICS_BIND_ADDRESS: `127.0.0.1:${port}`,
        HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
        CTRLMETRICS_LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    try {
      const deadline = t0 + 30_000;
      for (;;) {
        if (child.exitCode !== null || performance.now() > deadline)
          throw new Error(`the quick-start manager did not serve /metrics within 30 s:\n${stderr}`);
        const code = await status(`https://127.0.0.1:${port}/metrics`, token).catch(() => 0);
        if (code === 200) break;
        if (code !== 0) throw new Error(`/metrics answered ${code}:\n${stderr}`);
        await new Promise((res) => setTimeout(res, 5));
      }
      r.startMs.push(performance.now() - t0);
      // taskset execs node in its own process: the pid is node's
      r.startRssMb.push(memoryMb(child.pid!).rssMb);
    } finally {
      await stopChild(child);
    }
  }
  for (let i = 0; i < reps; i++) await authorityOnce(pin, r);
  return r;
}

/** One `ctrlmetrics authority` in a fresh process: spawn → ready, then its first Deployment. */
async function authorityOnce(pin: boolean, r: FootprintResult): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-footprint-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const [cmd, args] = nodeCommand(pin, [
    join(REPO_ROOT, 'packages/cli/dist/cli.js'),
    'authority',
    '--listen',
    '127.0.0.1:0',
    '--kubeconfig-out',
    kubeconfig,
  ]);
  const t0 = performance.now();
  const child = spawnTracked(cmd, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '', CTRLMETRICS_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (d: string) => (out = (out + d).slice(-8000));
  child.stdout!.setEncoding('utf8').on('data', collect);
  child.stderr!.setEncoding('utf8').on('data', collect);
  let client: KubeClient | undefined;
  try {
    const deadline = t0 + 30_000;
    while (!out.includes('authority ready')) {
      if (child.exitCode !== null || performance.now() > deadline)
        throw new Error(`the authority was not ready within 30 s:\n${out}`);
      await new Promise((res) => setTimeout(res, 2));
    }
    r.authorityStartMs.push(performance.now() - t0);
    r.authorityRssMb.push(memoryMb(child.pid!).rssMb);
    const kc = await readKubeconfig(kubeconfig);
    const { cluster, user } = selectContext(kc, undefined);
    client = new KubeClient(restConfigOf(kc, cluster, user));
    const labels = { app: 'footprint' };
    const t1 = performance.now();
    await client.create('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'footprint' },
      spec: {
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } },
      },
    });
    r.authorityFirstWriteMs.push(performance.now() - t1);
    r.authorityWriteRssMb.push(memoryMb(child.pid!).rssMb);
  } finally {
    client?.close();
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Markdown table of a footprint measurement. */
export function footprintTable(r: FootprintResult): string[] {
  const bare = median(r.bareRssMb);
  return [
    '| | wall time, ms | RSS, MB | over bare Node, MB | target |',
    '|---|---|---|---|---|',
    `| bare \`node\` | – | ${fmtStat(r.bareRssMb)} | – | |`,
    `| \`await import('ctrlmetrics')\` | ${fmtStat(r.importMs, 0)} | ${fmtStat(r.importRssMb)} | ${(median(r.importRssMb) - bare).toFixed(1)} | ≤ 150 ms, ≤ 15 MB |`,
    `| quick-start manager: spawn → first \`/metrics\` 200 | ${fmtStat(r.startMs, 0)} | ${fmtStat(r.startRssMb)} | ${(median(r.startRssMb) - bare).toFixed(1)} | ≤ 500 ms |`,
    `| \`ctrlmetrics authority\`: spawn → ready | ${fmtStat(r.authorityStartMs, 0)} | ${fmtStat(r.authorityRssMb)} | ${(median(r.authorityRssMb) - bare).toFixed(1)} | |`,
    `| its first Deployment create (built-in types load) | ${fmtStat(r.authorityFirstWriteMs, 0)} | ${fmtStat(r.authorityWriteRssMb)} | ${(median(r.authorityWriteRssMb) - bare).toFixed(1)} | |`,
  ];
}
