/**
 * `npm run bench:footprint [-- --reps=10]`: what starting costs (issue 33), in fresh processes, medians (min–max)
 * of `--reps` each, the kinds alternated:
 * - a bare `node` vs one that runs `await import('ctrlmetrics')` (resolved by name through package.json's exports,
 *   as an application resolves it): the import's wall time and the RSS right after it;
 * - the README's quick-start manager (`dist/examples/quickstart.js`: one controller, leader election, the secure
 *   endpoint with the real filter and a self-signed certificate) against the embedded authority, already running
 *   in this process: the time from spawning it to its first `/metrics` answer 200 for a reader's token, and its
 *   RSS at that moment.
 * Child processes run pinned to CPU 0 (`--no-pin` to leave them free). Prints a Markdown report.
 */
import { request } from 'node:https';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { freePort } from './lib/ports.js';
import { memoryMb } from './lib/proc.js';
import { runCapture, stopAll, stopChild, spawnTracked } from './lib/children.js';
import { startTestCluster } from '../test/helpers/cluster.js';

const ROOT = resolve(import.meta.dirname, '..');

interface Settings {
  reps: number;
  pin: boolean;
}

function parseArgs(argv: string[]): Settings {
  const s: Settings = { reps: 10, pin: true };
  for (const a of argv) {
    const m = /^--reps=(\d+)$/.exec(a);
    if (m && Number(m[1]) >= 1 && Number(m[1]) <= 100) s.reps = Number(m[1]);
    else if (a === '--no-pin') s.pin = false;
    else throw new Error(`unknown argument ${a}: --reps=N (1–100), --no-pin`);
  }
  return s;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmtStat = (xs: number[], d = 1) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

function nodeCommand(pin: boolean, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args];
}

/** One fresh process: bare, or importing the package; prints `{ms, rssMb}` with the RSS read after the import. */
async function importOnce(pin: boolean, withImport: boolean): Promise<{ ms: number; rssMb: number }> {
  const code = `const t = performance.now(); ${withImport ? "await import('ctrlmetrics');" : ''} const ms = performance.now() - t; process.stdout.write(JSON.stringify({ ms, rssMb: process.memoryUsage().rss / 1048576 }));`;
  const [cmd, args] = nodeCommand(pin, ['--input-type=module', '-e', code]);
  const r = await runCapture(cmd, args, { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`import run failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { ms: number; rssMb: number };
}

function get(url: string, token: string): Promise<number> {
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

async function main(): Promise<void> {
  const s = parseArgs(process.argv.slice(2));
  const quickstart = join(ROOT, 'dist/examples/quickstart.js');
  if (!existsSync(quickstart)) throw new Error(`${quickstart} is missing: run \`npm run build\` (npm run bench:footprint does)`);
  const bare: Array<{ ms: number; rssMb: number }> = [];
  const imported: Array<{ ms: number; rssMb: number }> = [];
  for (let i = 0; i < s.reps; i++) {
    bare.push(await importOnce(s.pin, false));
    imported.push(await importOnce(s.pin, true));
  }

  const cluster = await startTestCluster();
  const startMs: number[] = [];
  const startRss: number[] = [];
  try {
    const token = await cluster.readerToken();
    for (let i = 0; i < s.reps; i++) {
      const port = await freePort();
      const [cmd, args] = nodeCommand(s.pin, [quickstart]);
      const t0 = performance.now();
      const child = spawnTracked(cmd, args, {
        cwd: ROOT,
        env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: cluster.authority.kubeconfig, METRICS_BIND_ADDRESS: `127.0.0.1:${port}`, HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0', CTRLMETRICS_LOG_LEVEL: 'error' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
      try {
        const deadline = t0 + 30_000;
        for (;;) {
          if (child.exitCode !== null || performance.now() > deadline) throw new Error(`the quick-start manager did not serve /metrics within 30 s:\n${stderr}`);
          const status = await get(`https://127.0.0.1:${port}/metrics`, token).catch(() => 0);
          if (status === 200) break;
          if (status !== 0) throw new Error(`/metrics answered ${status}:\n${stderr}`);
          await new Promise((r) => setTimeout(r, 5));
        }
        startMs.push(performance.now() - t0);
        // taskset execs node in its own process: the pid is node's
        startRss.push(memoryMb(child.pid!).rssMb);
      } finally {
        await stopChild(child);
      }
    }
  } finally {
    await cluster.stop();
    await stopAll();
  }

  const bareRss = median(bare.map((x) => x.rssMb));
  const out: string[] = [];
  out.push(`## Footprint (issue 33): Node ${process.version}, ${s.reps} fresh processes each, medians (min–max)${s.pin ? ', pinned to CPU 0' : ''}`);
  out.push('');
  out.push(`    npm run bench:footprint${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`);
  out.push('');
  out.push('| | wall time, ms | RSS, MB | over bare Node, MB | target |');
  out.push('|---|---|---|---|---|');
  out.push(`| bare \`node\` | – | ${fmtStat(bare.map((x) => x.rssMb))} | – | |`);
  out.push(`| \`await import('ctrlmetrics')\` | ${fmtStat(imported.map((x) => x.ms), 0)} | ${fmtStat(imported.map((x) => x.rssMb))} | ${(median(imported.map((x) => x.rssMb)) - bareRss).toFixed(1)} | ≤ 150 ms, ≤ 15 MB |`);
  out.push(`| quick-start manager: spawn → first \`/metrics\` 200 | ${fmtStat(startMs, 0)} | ${fmtStat(startRss)} | ${(median(startRss) - bareRss).toFixed(1)} | ≤ 500 ms |`);
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
