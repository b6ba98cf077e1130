/**
 * The reconcile path's cost (`--controller-only`): a manager of its own process (bench/servers/controller-manager.ts,
 * pinned to CPU 0) annotates every one of N labelled ConfigMaps of a namespace, each with one reconcile that reads it
 * from the cache and one JSON merge patch (its own update brings one more reconcile, which finds it done). Measured
 * from the first reconcile (the caches synced) until all N are annotated: the time, the manager's CPU (this process
 * only: the API server's is apart), its RSS once synced. N = 2,000 and 10,000 (RSS per cached object from the two),
 * one worker and four, alternated, medians and ranges. The API server is the embedded authority in the benchmark's
 * process, or the cluster CTRLMETRICS_TEST_KUBECONFIG names.
 */
import { readJsonLines, spawnTracked, stopChild } from './children.js';
import { libEnv, OURS_NODE_ARGS, REPO_ROOT, type PreparedLib } from './servers.js';
import type { KubeClient, RestConfig } from '../../src/index.js';

/** The API server the benchmark runs against. */
export interface ControllerTarget {
  /** What it is, for the report. */
  label: string;
  restConfig: RestConfig;
  /** A cluster-admin client that makes and removes the objects (no rate limit). */
  admin: KubeClient;
}

export interface ControllerCell {
  objects: number;
  workers: number;
  /** first reconcile → all annotated, ms */
  ms: number[];
  /** the manager's CPU over that time, ms */
  cpuMs: number[];
  /** of which its main thread's (the JavaScript), ms; the rest is V8's and libuv's helper threads (GC, TLS) */
  mainCpuMs: number[];
  /** RSS at the first reconcile (the caches synced), MB */
  rssSyncedMb: number[];
  /** reconciles until all were annotated */
  reconciles: number[];
}

export interface ControllerResult {
  target: string;
  reps: number;
  cells: ControllerCell[];
}

interface ManagerEvent {
  event: string;
  at: number;
  cpuMs: number;
  mainCpuMs: number;
  /** the process's CPU in the kernel (system time), ms */
  systemCpuMs: number;
  rssMb: number;
  reconciles: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const stat = (xs: number[], digits = 0) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

/** Creates `n` ConfigMaps labelled `bench=1` in a new namespace, 32 requests at a time. */
async function populate(admin: KubeClient, namespace: string, n: number): Promise<void> {
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await admin.create(`/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace, labels: { bench: '1' } },
        data: { index: String(i), payload: 'x'.repeat(200) },
      });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** Runs the manager once over `namespace`; answers its two events. */
async function runOnce(lib: PreparedLib, target: ControllerTarget, namespace: string, expected: number, workers: number, pin: boolean): Promise<{ first: ManagerEvent; done: ManagerEvent }> {
  // CTRLMETRICS_BENCH_CPU_PROF=DIR: the manager writes a V8 CPU profile there (bench/profile-summary.ts reads it)
  const profDir = process.env.CTRLMETRICS_BENCH_CPU_PROF;
  // the compiled library with the generated manager.yaml's NODE_OPTIONS: the manager as a scaffolded project runs it
  const args = [...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...OURS_NODE_ARGS, ...lib.nodeArgs, lib.script('servers/controller-manager.ts')];
  const [cmd, argv] = pin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args];
  const child = spawnTracked(cmd, argv, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...libEnv(lib), CTRLMETRICS_LOG_LEVEL: 'error', CONTROLLER_CONFIG: JSON.stringify({ restConfig: target.restConfig, namespace, expected, workers }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events = new Map<string, ManagerEvent>();
  const stderr = readJsonLines<ManagerEvent>(child, (e) => events.set(e.event, e));
  try {
    const deadline = Date.now() + 600_000;
    while (!events.has('all-annotated')) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the manager exited before annotating every object: ${stderr()}`);
      if (Date.now() > deadline) throw new Error(`the manager did not annotate ${expected} objects within 600 s: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { first: events.get('first-reconcile')!, done: events.get('all-annotated')! };
  } finally {
    await stopChild(child);
  }
}

/**
 * Measures each (objects, workers) cell `reps` times, the cells alternated (their order reversed every other
 * repetition); every run gets a fresh namespace of fresh objects, deleted after it.
 */
export async function measureController(
  lib: PreparedLib,
  target: ControllerTarget,
  sizes: number[],
  workerCounts: number[],
  reps: number,
  pin: boolean,
  progress: (msg: string) => void = () => undefined,
): Promise<ControllerResult> {
  const cells: ControllerCell[] = sizes.flatMap((objects) => workerCounts.map((workers) => ({ objects, workers, ms: [], cpuMs: [], mainCpuMs: [], rssSyncedMb: [], reconciles: [] })));
  let round = 0;
  const prefix = `bench-ctl-${Date.now().toString(36)}`;
  for (let rep = 0; rep < reps; rep++) {
    for (const cell of rep % 2 ? [...cells].reverse() : cells) {
      const namespace = `${prefix}-${round++}`;
      progress(`controller: ${cell.objects} ConfigMaps, ${cell.workers} worker(s): creating the objects`);
      await populate(target.admin, namespace, cell.objects);
      try {
        const { first, done } = await runOnce(lib, target, namespace, cell.objects, cell.workers, pin);
        cell.ms.push(done.at - first.at);
        cell.cpuMs.push(done.cpuMs - first.cpuMs);
        cell.mainCpuMs.push(done.mainCpuMs - first.mainCpuMs);
        cell.rssSyncedMb.push(first.rssMb);
        cell.reconciles.push(done.reconciles);
        const per1000 = (ms: number) => ((ms / cell.objects) * 1000).toFixed(0);
        progress(
          `controller: ${cell.objects} objects, ${cell.workers} worker(s): ${(cell.objects / ((done.at - first.at) / 1000)).toFixed(0)} patches/s, ${per1000(done.cpuMs - first.cpuMs)} ms CPU per 1,000 (main thread ${per1000(done.mainCpuMs - first.mainCpuMs)}, kernel ${per1000(done.systemCpuMs - first.systemCpuMs)}), RSS synced ${first.rssMb.toFixed(0)} MB`,
        );
      } finally {
        await target.admin.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
      }
    }
  }
  return { target: target.label, reps, cells };
}

/** The Markdown table of a controller measurement, with the RSS per cached object from the smallest and largest N. */
export function controllerTable(r: ControllerResult): string[] {
  const rows = r.cells.map((c) => {
    const perSecond = c.ms.map((ms) => c.objects / (ms / 1000));
    const per1000 = (xs: number[]) => xs.map((ms) => (ms / c.objects) * 1000);
    return `| ${c.objects.toLocaleString('en-US')} | ${c.workers} | ${stat(perSecond)} | ${stat(per1000(c.cpuMs))} | ${stat(per1000(c.mainCpuMs))} | ${stat(c.rssSyncedMb)} | ${stat(c.reconciles)} |`;
  });
  const out = [
    '| objects | workers | patches/s | manager CPU ms per 1,000 objects | of which the main thread | RSS once synced, MB | reconciles |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ];
  const one = r.cells.filter((c) => c.workers === Math.min(...r.cells.map((x) => x.workers)));
  const small = one.reduce((a, b) => (b.objects < a.objects ? b : a), one[0]!);
  const large = one.reduce((a, b) => (b.objects > a.objects ? b : a), one[0]!);
  if (small && large && large.objects > small.objects) {
    const perObjectKiB = ((median(large.rssSyncedMb) - median(small.rssSyncedMb)) * 1024) / (large.objects - small.objects);
    out.push('', `RSS per cached object (N ${small.objects.toLocaleString('en-US')} → ${large.objects.toLocaleString('en-US')}, medians): ${perObjectKiB.toFixed(2)} KiB`);
  }
  for (const n of new Set(r.cells.map((c) => c.objects))) {
    const byWorkers = r.cells.filter((c) => c.objects === n).sort((a, b) => a.workers - b.workers);
    if (byWorkers.length < 2) continue;
    const rate = (c: ControllerCell) => median(c.ms.map((ms) => c.objects / (ms / 1000)));
    out.push(`Throughput at ${byWorkers.at(-1)!.workers} workers ÷ 1 (N ${n.toLocaleString('en-US')}): ${(rate(byWorkers.at(-1)!) / rate(byWorkers[0]!)).toFixed(2)}×`);
  }
  return out;
}
