/**
 * The reconcile path's cost (`--controller-only`): a manager of its own process (bench/servers/controller-manager.ts,
 * pinned to CPU 0) annotates every one of N labelled ConfigMaps of a namespace, each with one reconcile that reads it
 * from the cache and one JSON merge patch (its own update brings one more reconcile, which finds it done). Measured
 * from the first reconcile (the caches synced) until all N are annotated: the time, the manager's CPU (this process
 * only: the API server's is apart), its RSS once synced. N = 2,000 and 10,000 (RSS per cached object from the two),
 * one worker and four, alternated, medians and ranges. The API server is the embedded authority in the benchmark's
 * process, or the cluster CTRLMETRICS_TEST_KUBECONFIG names.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readJsonLines, spawnTracked, stopChild } from './children.js';
import { buildGoFloor, libEnv, OURS_NODE_ARGS, REPO_ROOT, type PreparedLib } from './servers.js';
import type { KubeClient, RestConfig } from '../../packages/ctrlmetrics/src/index.js';

/** The API server the benchmark runs against. */
export interface ControllerTarget {
  /** What it is, for the report. */
  label: string;
  restConfig: RestConfig;
  /** A cluster-admin client that makes and removes the objects (no rate limit). */
  admin: KubeClient;
}

/**
 * Who manages: our Manager, or the Go floor (bench/servers/controller-go: Go's standard library doing the same), or
 * our Manager built from another checkout (`ours-before`, with CTRLMETRICS_BENCH_CONTROLLER_BEFORE=<a built checkout>:
 * an A/B of a change to the reconcile path in the same alternated runs).
 */
export type ControllerManager = 'ours' | 'go-floor' | 'ours-before';

export interface ControllerCell {
  /** absent in older results: ours */
  manager?: ControllerManager;
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
  /** One merge patch's CPU (µs, per block) through KubeClient and through a bare node:https request (absent in older results). */
  floor?: { client: number[]; bare: number[] };
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
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const stat = (xs: number[], digits = 0) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

/**
 * Deletes a cell's namespace and waits until it and its objects are gone (at most a minute), so that the next cell
 * does not run while thousands of deletions go by: a watch started then from a list's resourceVersion can find it
 * older than the API server's event history (410), which the Go floor, unlike an informer, does not recover from.
 */
async function removeNamespace(admin: KubeClient, namespace: string): Promise<void> {
  await admin.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      await admin.get(`/api/v1/namespaces/${namespace}`);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

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
/** Builds the Go floor (Go's standard library only); undefined when no Go toolchain is installed. */
export function buildControllerGoFloor(): Promise<string | undefined> {
  return buildGoFloor('controller-go');
}

const pem = (v: string | Buffer | undefined) => (v === undefined ? '' : String(v));

/** The library of another checkout (built: its packages/ctrlmetrics/dist) for the same bench entry. */
function beforeLibEnv(checkout: string): Record<string, string> {
  return {
    CTRLMETRICS_LIB_ROOT: pathToFileURL(join(checkout, 'packages/ctrlmetrics/dist/src')).href + '/',
    CTRLMETRICS_LIB_EXT: '.js',
  };
}

/** Starts one manager (ours, ours-before or the Go floor) over `namespace`. */
function startManager(
  manager: ControllerManager,
  lib: PreparedLib,
  goBin: string | undefined,
  target: ControllerTarget,
  namespace: string,
  expected: number,
  workers: number,
  pin: boolean,
) {
  const pinned = (cmd: string, args: string[]): [string, string[]] =>
    pin ? ['taskset', ['-c', '0', cmd, ...args]] : [cmd, args];
  if (manager === 'go-floor') {
    const rc = target.restConfig;
    const [cmd, argv] = pinned(goBin!, []);
    return spawnTracked(cmd, argv, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        CONTROLLER_GO_CONFIG: JSON.stringify({
          server: rc.server,
          ca: pem(rc.ca),
          cert: pem(rc.cert),
          key: pem(rc.key),
          token: rc.token ?? '',
          namespace,
          expected,
          workers,
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  // CTRLMETRICS_BENCH_CPU_PROF=DIR: the manager writes a V8 CPU profile there (bench/profile-summary.ts reads it)
  const profDir = process.env.CTRLMETRICS_BENCH_CPU_PROF;
  // the compiled library with the generated manager.yaml's NODE_OPTIONS: the manager as a scaffolded project runs it
  const args = [
    ...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []),
    ...OURS_NODE_ARGS,
    ...lib.nodeArgs,
    lib.script('servers/controller-manager.ts'),
  ];
  const [cmd, argv] = pinned(process.execPath, args);
  return spawnTracked(cmd, argv, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      ...libEnv(lib),
      ...(manager === 'ours-before' ? beforeLibEnv(process.env.CTRLMETRICS_BENCH_CONTROLLER_BEFORE!) : {}),
      CTRLMETRICS_LOG_LEVEL: 'error',
      CONTROLLER_CONFIG: JSON.stringify({ restConfig: target.restConfig, namespace, expected, workers }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function runOnce(
  manager: ControllerManager,
  lib: PreparedLib,
  goBin: string | undefined,
  target: ControllerTarget,
  namespace: string,
  expected: number,
  workers: number,
  pin: boolean,
): Promise<{ first: ManagerEvent; done: ManagerEvent }> {
  const child = startManager(manager, lib, goBin, target, namespace, expected, workers, pin);
  const events = new Map<string, ManagerEvent>();
  const stderr = readJsonLines<ManagerEvent>(child, (e) => events.set(e.event, e));
  try {
    const deadline = Date.now() + 600_000;
    while (!events.has('all-annotated')) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the manager exited before annotating every object: ${stderr()}`);
      if (Date.now() > deadline)
        throw new Error(`the manager did not annotate ${expected} objects within 600 s: ${stderr()}`);
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
  /** The Go floor's binary ({@link buildControllerGoFloor}): its cells run beside ours when given. */
  goBin?: string,
): Promise<ControllerResult> {
  const managers: ControllerManager[] = ['ours'];
  if (process.env.CTRLMETRICS_BENCH_CONTROLLER_BEFORE) managers.push('ours-before');
  if (goBin) managers.push('go-floor');
  const cells: ControllerCell[] = sizes.flatMap((objects) =>
    workerCounts.flatMap((workers) =>
      managers.map((manager) => ({
        manager,
        objects,
        workers,
        ms: [],
        cpuMs: [],
        mainCpuMs: [],
        rssSyncedMb: [],
        reconciles: [],
      })),
    ),
  );
  let round = 0;
  const prefix = `bench-ctl-${Date.now().toString(36)}`;
  for (let rep = 0; rep < reps; rep++) {
    for (const cell of rep % 2 ? [...cells].reverse() : cells) {
      const namespace = `${prefix}-${round++}`;
      const manager = cell.manager ?? 'ours';
      progress(`controller: ${manager}, ${cell.objects} ConfigMaps, ${cell.workers} worker(s): creating the objects`);
      await populate(target.admin, namespace, cell.objects);
      try {
        const { first, done } = await runOnce(manager, lib, goBin, target, namespace, cell.objects, cell.workers, pin);
        cell.ms.push(done.at - first.at);
        cell.cpuMs.push(done.cpuMs - first.cpuMs);
        cell.mainCpuMs.push(done.mainCpuMs - first.mainCpuMs);
        cell.rssSyncedMb.push(first.rssMb);
        cell.reconciles.push(done.reconciles);
        const per1000 = (ms: number) => ((ms / cell.objects) * 1000).toFixed(0);
        progress(
          `controller: ${manager}, ${cell.objects} objects, ${cell.workers} worker(s): ${(cell.objects / ((done.at - first.at) / 1000)).toFixed(0)} patches/s, ${per1000(done.cpuMs - first.cpuMs)} ms CPU per 1,000 (main thread ${per1000(done.mainCpuMs - first.mainCpuMs)}, kernel ${per1000(done.systemCpuMs - first.systemCpuMs)}), RSS synced ${first.rssMb.toFixed(0)} MB`,
        );
      } finally {
        await removeNamespace(target.admin, namespace);
      }
    }
  }
  return { target: target.label, reps, cells };
}

/**
 * The request floor: `blocks` × `perBlock` merge patches to `objects` ConfigMaps of a fresh namespace from one
 * process pinned to CPU 0, through KubeClient and through bare node:https, alternated block by block after
 * `warmup` of each (bench/servers/patch-loop.ts).
 */
export async function measureRequestFloor(
  lib: PreparedLib,
  target: ControllerTarget,
  pin: boolean,
  objects = 200,
  perBlock = 300,
  blocks = 16,
  warmup = 3000,
): Promise<{ client: number[]; bare: number[] }> {
  const namespace = `bench-floor-${Date.now().toString(36)}`;
  await populate(target.admin, namespace, objects);
  try {
    const args = [...OURS_NODE_ARGS, ...lib.nodeArgs, lib.script('servers/patch-loop.ts')];
    const [cmd, argv] = pin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args];
    const child = spawnTracked(cmd, argv, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        ...libEnv(lib),
        PATCH_LOOP_CONFIG: JSON.stringify({
          restConfig: target.restConfig,
          namespace,
          objects,
          perBlock,
          blocks,
          warmup,
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let result: { client: number[]; bare: number[] } | undefined;
    const stderr = readJsonLines<{ event: string; perRequestUs: { client: number[]; bare: number[] } }>(child, (e) => {
      if (e.event === 'floor') result = e.perRequestUs;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (!result) throw new Error(`the request floor fixture exited (${code}) without a result: ${stderr()}`);
    return result;
  } finally {
    await target.admin.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
  }
}

/** The Markdown table of a controller measurement, with the RSS per cached object from the smallest and largest N. */
export function controllerTable(r: ControllerResult): string[] {
  const rows = r.cells.map((c) => {
    const perSecond = c.ms.map((ms) => c.objects / (ms / 1000));
    const per1000 = (xs: number[]) => xs.map((ms) => (ms / c.objects) * 1000);
    const main = c.manager === 'go-floor' ? '–' : stat(per1000(c.mainCpuMs));
    return `| ${c.manager ?? 'ours'} | ${c.objects.toLocaleString('en-US')} | ${c.workers} | ${stat(perSecond)} | ${stat(per1000(c.cpuMs))} | ${main} | ${stat(c.rssSyncedMb)} | ${stat(c.reconciles)} |`;
  });
  const out = [
    '| manager | objects | workers | patches/s | manager CPU ms per 1,000 objects | of which the main thread | RSS once synced, MB | reconciles |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
  const rate = (c: ControllerCell) => median(c.ms.map((ms) => c.objects / (ms / 1000)));
  const cpu = (c: ControllerCell) => median(c.cpuMs.map((ms) => (ms / c.objects) * 1000));
  // ours ÷ the Go floor and ours ÷ ours-before, cell by cell
  for (const other of ['go-floor', 'ours-before'] as const)
    for (const g of r.cells.filter((c) => c.manager === other)) {
      const o = r.cells.find(
        (c) => (c.manager ?? 'ours') === 'ours' && c.objects === g.objects && c.workers === g.workers,
      );
      if (o)
        out.push(
          `| ours ÷ ${other} | ${g.objects.toLocaleString('en-US')} | ${g.workers} | ${(rate(o) / rate(g)).toFixed(2)} | ${(cpu(o) / cpu(g)).toFixed(2)} | | ${(median(o.rssSyncedMb) / median(g.rssSyncedMb)).toFixed(2)} | |`,
        );
    }
  const one = r.cells.filter(
    (c) => (c.manager ?? 'ours') === 'ours' && c.workers === Math.min(...r.cells.map((x) => x.workers)),
  );
  const small = one.reduce((a, b) => (b.objects < a.objects ? b : a), one[0]);
  const large = one.reduce((a, b) => (b.objects > a.objects ? b : a), one[0]);
  if (small && large && large.objects > small.objects) {
    const perObjectKiB =
      ((median(large.rssSyncedMb) - median(small.rssSyncedMb)) * 1024) / (large.objects - small.objects);
    out.push(
      '',
      `RSS per cached object (N ${small.objects.toLocaleString('en-US')} → ${large.objects.toLocaleString('en-US')}, medians): ${perObjectKiB.toFixed(2)} KiB`,
    );
  }
  for (const n of new Set(r.cells.map((c) => c.objects))) {
    const byWorkers = r.cells
      .filter((c) => (c.manager ?? 'ours') === 'ours' && c.objects === n)
      .sort((a, b) => a.workers - b.workers);
    if (byWorkers.length < 2) continue;
    out.push(
      `Throughput at ${byWorkers.at(-1)!.workers} workers ÷ 1 (N ${n.toLocaleString('en-US')}): ${(rate(byWorkers.at(-1)!) / rate(byWorkers[0])).toFixed(2)}×`,
    );
  }
  if (r.floor) {
    const { client, bare } = r.floor;
    out.push(
      '',
      `One merge patch, CPU of the calling process (µs, medians (min–max) of ${client.length} alternated blocks): KubeClient.mergePatch ${stat(client)}, bare node:https ${stat(bare)}; ratio ${(median(client) / median(bare)).toFixed(2)}.`,
    );
  }
  return out;
}
