/**
 * Start-up cost in fresh processes: a bare `node` against `await import('ctrlmetrics')` (resolved by
 * name through package.json's exports), and the README's quick-start manager from spawn to its first `/metrics`
 * 200 for a reader's token against an authority that is already running. Used by bench/footprint.ts and by
 * `npm run bench` (its footprint cells).
 */
import { existsSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { memoryMb } from './proc.js';
import { runCapture, spawnTracked, stopChild } from './children.js';
import { REPO_ROOT } from './servers.js';
import type { TestCluster } from '../../test/helpers/cluster.js';

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
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmtStat = (xs: number[], d = 1) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

export const footprintMedian = median;

function nodeCommand(pin: boolean, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args];
}

/** One fresh process, bare or importing the package; the RSS is read right after the import. */
async function importOnce(pin: boolean, withImport: boolean): Promise<{ ms: number; rssMb: number }> {
  const code = `const t = performance.now(); ${withImport ? "await import('ctrlmetrics');" : ''} const ms = performance.now() - t; process.stdout.write(JSON.stringify({ ms, rssMb: process.memoryUsage().rss / 1048576 }));`;
  const [cmd, args] = nodeCommand(pin, ['--input-type=module', '-e', code]);
  const r = await runCapture(cmd, args, { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '' }, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`import run failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { ms: number; rssMb: number };
}

function status(url: string, token: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    // the manager serves a self-signed certificate here; this measures start-up, not verification
    const req = request(url, { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false, agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolveStatus(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Measures `reps` of each kind, alternated; child processes pinned to CPU 0 when `pin`. */
export async function measureFootprint(cluster: TestCluster, reps: number, pin: boolean): Promise<FootprintResult> {
  const quickstart = join(REPO_ROOT, 'dist/examples/quickstart.js');
  if (!existsSync(quickstart)) throw new Error(`${quickstart} is missing: run \`npm run build\``);
  const r: FootprintResult = { reps, pinned: pin, bareRssMb: [], importMs: [], importRssMb: [], startMs: [], startRssMb: [] };
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
      env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: cluster.authority.kubeconfig, METRICS_BIND_ADDRESS: `127.0.0.1:${port}`, HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0', CTRLMETRICS_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    try {
      const deadline = t0 + 30_000;
      for (;;) {
        if (child.exitCode !== null || performance.now() > deadline) throw new Error(`the quick-start manager did not serve /metrics within 30 s:\n${stderr}`);
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
  return r;
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
  ];
}
