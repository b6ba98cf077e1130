/**
 * `npm run bench:manager-memory [-- flags]`: peak memory of the manager `ctrlmetrics init` generates, to size the
 * requests and limits of its config/manager/manager.yaml.
 *
 * A project is generated into a temporary folder and built against this checkout (node_modules/ctrlmetrics links
 * here; run `npm run build` first). The embedded authority runs in this process; the manager (`dist/main.js`,
 * its one ConfigMap controller) is a child process on the same Node as this script, with the admin kubeconfig.
 * Workload per run: `--objects` ConfigMaps of 8 keys in 3 namespaces exist before the manager starts; once its
 * metric shows all of them, `--rounds` rounds each update every ConfigMap (8 writers) while 2 clients scrape
 * /metrics with a bearer token (TokenReview + SubjectAccessReview on each), each waiting `--scrape-interval-ms`
 * between scrapes (0: back to back, a flood). Read from /proc/<pid>/status: RSS once synced, and the peak
 * (VmHWM) over the whole run.
 *
 * Flags: --objects=300 · --rounds=5 · --reps=3 · --scrape-interval-ms=100 ·
 * --node-options="--max-old-space-size=…" (the manager's NODE_OPTIONS).
 * Another Node: `bash scripts/with-node.sh 24 node --import tsx bench/manager-memory.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { KubeClient } from '../packages/ctrlmetrics/src/index.js';
import { startAuthority } from '../packages/envtest/src/index.js';
import { initProject } from '../packages/cli/src/scaffold/init.js';
import { memoryMb } from './lib/proc.js';
import { freePort } from './lib/ports.js';

const ROOT = resolve(import.meta.dirname, '..');

interface Settings {
  objects: number;
  rounds: number;
  reps: number;
  nodeOptions: string;
  scrapeIntervalMs: number;
}

function parseArgs(argv: string[]): Settings {
  const s: Settings = { objects: 300, rounds: 5, reps: 3, nodeOptions: '', scrapeIntervalMs: 100 };
  for (const a of argv) {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    const [, k, v] = m as unknown as [string, string, string];
    if (k === 'objects') s.objects = Number(v);
    else if (k === 'rounds') s.rounds = Number(v);
    else if (k === 'reps') s.reps = Number(v);
    else if (k === 'node-options') s.nodeOptions = v;
    else if (k === 'scrape-interval-ms') s.scrapeIntervalMs = Number(v);
    else throw new Error(`unknown flag --${k}`);
  }
  if (![s.objects, s.rounds, s.reps].every((n) => Number.isInteger(n) && n >= 1))
    throw new Error('--objects, --rounds and --reps are positive integers');
  if (!(s.scrapeIntervalMs >= 0)) throw new Error('--scrape-interval-ms is 0 (back to back) or more');
  return s;
}

/** The generated project, built against this checkout. */
async function buildProject(work: string): Promise<string> {
  const runtime = join(ROOT, 'packages/ctrlmetrics');
  if (!existsSync(join(runtime, 'dist/src/index.js'))) throw new Error('run npm run build first');
  const app = join(work, 'mem-op');
  await initProject({ projectName: 'mem-op', dir: app, ctrlmetricsVersion: `file:${runtime}` });
  mkdirSync(join(app, 'node_modules/@types'), { recursive: true });
  symlinkSync(runtime, join(app, 'node_modules/ctrlmetrics'), 'dir');
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(app, 'node_modules/@types/node'), 'dir');
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: app,
    stdio: 'inherit',
  });
  return app;
}

function scrape(agent: Agent, port: number, token: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        agent,
        headers: { authorization: `Bearer ${token}` },
        timeout: 10_000,
      },
      (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('scrape timed out')));
    req.on('error', rej);
    req.end();
  });
}

const NAMESPACES = ['mem-a', 'mem-b', 'mem-c'];

function configMap(i: number, round: number): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (let k = 0; k < 8; k++) data[`key-${k}`] = `round-${round}-`.padEnd(64, String(i % 10));
  // labelled for the scaffold's sample controller, which reconciles those alone
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, namespace: NAMESPACES[i % 3], labels: { 'app.kubernetes.io/part-of': 'mem-op' } },
    data,
  };
}

async function inParallel(n: number, workers: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

interface RunResult {
  syncedMb: number;
  peakMb: number;
  scrapes: number;
  lastScrapeBytes: number;
}

async function runOnce(app: string, s: Settings): Promise<RunResult> {
  const authority = await startAuthority({});
  // faster than a client's default 20 requests/s, so a round of updates takes seconds, not a minute
  const admin = new KubeClient({ ...authority.restConfig, qps: 200, burst: 200 });
  let manager: ChildProcess | undefined;
  try {
    for (const ns of NAMESPACES)
      await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await inParallel(s.objects, 8, (i) =>
      admin.create(`/api/v1/namespaces/${NAMESPACES[i % 3]}/configmaps`, configMap(i, 0)),
    );

    const port = await freePort();
    const health = await freePort();
    manager = spawn(
      process.execPath,
      [
        'dist/main.js',
        `--metrics-bind-address=127.0.0.1:${port}`,
        `--health-probe-bind-address=127.0.0.1:${health}`,
        '--kubeconfig',
        authority.kubeconfig,
      ],
      {
        cwd: app,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, KUBECONFIG: '', NODE_OPTIONS: s.nodeOptions },
      },
    );
    const pid = manager.pid!;
    let peakSeen = 0;
    const sampler = setInterval(() => {
      try {
        peakSeen = Math.max(peakSeen, memoryMb(pid).rssMb);
      } catch {
        // exited
      }
    }, 50);
    const agent = new Agent({ keepAlive: true, rejectUnauthorized: false, maxSockets: 2 });
    try {
      // only the workload's ConfigMaps (each namespace also holds kube-root-ca.crt)
      const series = /^mem_op_configmap_keys\{name="cm-\d+",namespace="mem-[abc]"\} 8$/gm;
      const deadline = Date.now() + 60_000;
      let seen = 'no answer';
      for (;;) {
        if (Date.now() > deadline)
          throw new Error(`the manager did not reconcile every ConfigMap within 60 s: ${seen}`);
        if (manager.exitCode !== null) throw new Error(`the manager exited with ${manager.exitCode}`);
        const r = await scrape(agent, port, authority.adminToken).catch(() => undefined);
        const count = r?.body.match(series)?.length ?? 0;
        seen = `${r?.status ?? 'no answer'}, ${count} series`;
        if (r?.status === 200 && count === s.objects) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const syncedMb = memoryMb(pid).rssMb;
      if (process.env['BENCH_DEBUG']) console.error(`synced after ${Date.now() - deadline + 60_000} ms`);
      let scrapes = 0;
      let lastScrapeBytes = 0;
      for (let round = 1; round <= s.rounds; round++) {
        let writing = true;
        const scrapers = Array.from({ length: 2 }, async () => {
          while (writing) {
            const r = await scrape(agent, port, authority.adminToken);
            if (r.status !== 200) throw new Error(`scrape answered ${r.status}`);
            scrapes++;
            lastScrapeBytes = r.body.length;
            if (s.scrapeIntervalMs > 0) await new Promise((res) => setTimeout(res, s.scrapeIntervalMs));
          }
        });
        await inParallel(s.objects, 8, (i) =>
          admin.replace(`/api/v1/namespaces/${NAMESPACES[i % 3]}/configmaps/cm-${i}`, configMap(i, round)),
        );
        writing = false;
        await Promise.all(scrapers);
        if (process.env['BENCH_DEBUG']) console.error(`round ${round} done, ${scrapes} scrapes`);
      }
      const peakMb = Math.max(peakSeen, memoryMb(pid).peakMb);
      return { syncedMb, peakMb, scrapes, lastScrapeBytes };
    } finally {
      clearInterval(sampler);
      agent.destroy();
    }
  } finally {
    if (manager && manager.exitCode === null) {
      const exited = new Promise((r) => manager!.once('exit', r));
      manager.kill('SIGTERM');
      await exited;
    }
    admin.close();
    await authority.stop();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const settings = parseArgs(process.argv.slice(2));
const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-manager-memory-'));
try {
  const app = await buildProject(work);
  const limit = /limits:\n\s+cpu: \S+\n\s+memory: (\S+)/.exec(
    readFileSync(join(app, 'config/manager/manager.yaml'), 'utf8'),
  )?.[1];
  const results: RunResult[] = [];
  for (let i = 0; i < settings.reps; i++) {
    const r = await runOnce(app, settings);
    results.push(r);
    console.log(
      `run ${i + 1}: synced ${r.syncedMb.toFixed(1)} MiB, peak ${r.peakMb.toFixed(1)} MiB, ${r.scrapes} scrapes of ${(r.lastScrapeBytes / 1024).toFixed(0)} KB`,
    );
  }
  const fmt = (xs: number[]) =>
    `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
  const peak = results.map((r) => r.peakMb);
  console.log(
    `node ${process.version}, ${settings.objects} ConfigMaps, ${settings.rounds} update rounds, scrape interval ${settings.scrapeIntervalMs} ms, NODE_OPTIONS="${settings.nodeOptions}"\n` +
      `RSS once synced, MiB: ${fmt(results.map((r) => r.syncedMb))}\npeak RSS, MiB: ${fmt(peak)}\n` +
      (limit
        ? `config/manager/manager.yaml limit ${limit}: worst peak is ${((Math.max(...peak) / Number.parseInt(limit, 10)) * 100).toFixed(0)}% of it\n`
        : ''),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
