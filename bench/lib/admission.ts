/**
 * Admission requests per second and latency of the example operator's defaulter (examples/memcached-operator/
 * webhook.ts) in a manager of its own process (test/reliability/fixtures/manager-process.ts, pinned to CPU 0), driven
 * by a load process (test/reliability/fixtures/admission-load.ts, pinned to CPU 1) over keep-alive HTTPS
 * connections; each connection count measured `reps` times, alternated.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapture, spawnTracked, stopChild } from './children.js';
import { REPO_ROOT } from './servers.js';
import { generateCA, issueServingCert } from '../../test/helpers/certs.js';
import type { TestCluster } from '../../test/helpers/cluster.js';

export interface AdmissionCell {
  conns: number;
  reqPerSec: number[];
  p50Ms: number[];
  p99Ms: number[];
}

export interface AdmissionResult {
  path: string;
  durationS: number;
  cells: AdmissionCell[];
}

const PATH = '/mutate-cache-example-com-v1alpha1-memcached';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const stat = (xs: number[], d = 1) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

function pinned(pin: boolean, cpu: number, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', String(cpu), process.execPath, ...args]] : [process.execPath, args];
}

export async function measureAdmission(cluster: TestCluster, conns: number[], reps: number, durationS: number, pin: boolean): Promise<AdmissionResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-admission-'));
  const ca = await generateCA('bench-admission-ca');
  const pair = await issueServingCert(ca, ['127.0.0.1']);
  writeFileSync(join(dir, 'tls.crt'), pair.certPem);
  writeFileSync(join(dir, 'tls.key'), pair.keyPem);
  const [cmd, args] = pinned(pin, 0, ['--import', 'tsx', join(REPO_ROOT, 'test/reliability/fixtures/manager-process.ts')]);
  const child = spawnTracked(cmd, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'error', FIXTURE_CONFIG: JSON.stringify({ restConfig: cluster.authority.restConfig, webhook: { certDir: dir } }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  try {
    const deadline = Date.now() + 60_000;
    while (!/^WEBHOOK (\d+)$/m.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the manager did not serve webhooks within 60 s: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const port = Number(/^WEBHOOK (\d+)$/m.exec(out)![1]);
    const cells: AdmissionCell[] = conns.map((c) => ({ conns: c, reqPerSec: [], p50Ms: [], p99Ms: [] }));
    const run = async (c: number, seconds: number) => {
      const [lcmd, largs] = pinned(pin, 1, ['--import', 'tsx', join(REPO_ROOT, 'test/reliability/fixtures/admission-load.ts')]);
      const r = await runCapture(lcmd, largs, {
        cwd: REPO_ROOT,
        timeoutMs: seconds * 1000 + 60_000,
        env: { ...process.env, LOAD_CONFIG: JSON.stringify({ url: `https://127.0.0.1:${port}${PATH}`, ca: ca.certPem, connections: c, durationMs: seconds * 1000, maxRequests: 10_000_000 }) },
      });
      const line = r.stdout.trim().split('\n').at(-1) ?? '';
      if (r.code !== 0 || !line) throw new Error(`admission load failed (exit ${r.code}): ${r.stderr.slice(-2000)}`);
      return JSON.parse(line) as { sent: number; elapsedMs: number; outcomes: Record<string, number>; p50: number; p99: number };
    };
    await run(8, 2); // warm-up
    for (let rep = 0; rep < reps; rep++) {
      for (const cell of rep % 2 ? [...cells].reverse() : cells) {
        const r = await run(cell.conns, durationS);
        if (Object.keys(r.outcomes).some((k) => k !== 'allowed')) throw new Error(`admission answers other than allowed: ${JSON.stringify(r.outcomes)}`);
        cell.reqPerSec.push(r.sent / (r.elapsedMs / 1000));
        cell.p50Ms.push(r.p50);
        cell.p99Ms.push(r.p99);
      }
    }
    return { path: PATH, durationS, cells };
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Markdown table of an admission measurement. */
export function admissionTable(r: AdmissionResult): string[] {
  return [
    '| connections | admissions/s | p50 ms | p99 ms |',
    '|---|---|---|---|',
    ...r.cells.map((c) => `| ${c.conns} | ${stat(c.reqPerSec, 0)} | ${stat(c.p50Ms, 2)} | ${stat(c.p99Ms, 2)} |`),
  ];
}
