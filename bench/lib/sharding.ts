/**
 * The scaling sharding buys, on the embedded authority with a sharder (bench/servers/sharder-process.ts) and shards
 * (bench/servers/shard-manager.ts), each its own process:
 *
 * - **throughput**: `objects` ConfigMaps of one ring reconciled in a loop (each reconcile asks to run again at once,
 *   one worker per shard) by 1, 2 and 3 shards; the aggregate reconciles/s over a window in which every queue is
 *   full, for a latency-bound reconcile (20 ms wait; shards unpinned) and a CPU-bound one (2 ms of work; shard i on
 *   CPU i mod 2, so 1 → 2 shards doubles the cores), with each shard's queue-duration p99. Shard counts alternate
 *   in order between repetitions; a change of count is a hand-over (joins by drains, SIGTERM releases).
 * - **memory**: `memoryObjects` ConfigMaps of another ring: each of 3 shards' heap (after a full GC) against one
 *   plain manager's caching them all; the sharder's RSS with the first ring's objects only and with both rings'
 *   (it keeps no cache of the objects).
 */
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { readJsonLines, spawnTracked, stopChild } from './children.js';
import { OURS_NODE_ARGS, REPO_ROOT } from './servers.js';
import type { TestCluster } from '../../test/helpers/cluster.js';
import { installCrd } from '../../test/helpers/cluster.js';
import { installWebhooks } from '../../packages/envtest/src/index.js';
import { controllerRingCrd } from '../../packages/ctrlmetrics/src/sharding/controllerring.js';
import { shardingLabels } from '../../packages/ctrlmetrics/src/controller/sharding.js';

type Mode = 'latency' | 'cpu';

export interface ShardingScaleCell {
  mode: Mode;
  shards: number;
  /** aggregate reconciles/s, one per repetition */
  rates: number[];
  /** the largest queue-duration p99 among the shards, s, one per repetition */
  queueP99s: number[];
}

export interface ShardingResult {
  objects: number;
  reps: number;
  windowS: number;
  cells: ShardingScaleCell[];
  memory?: {
    objects: number;
    singleHeapMb: number;
    shardHeapMb: number[];
    sharderRssMb: { objects: number; rssMb: number; heapMb: number }[];
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const range = (xs: number[], digits = 0) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
const MB = 1024 * 1024;

interface Child {
  child: ChildProcess;
  last: Map<string, Record<string, number>>;
  waitFor(event: string, timeoutMs: number, after?: number): Promise<Record<string, number>>;
  ask(line: string, event: string): Promise<Record<string, number>>;
}

function spawnChild(
  script: string,
  env: Record<string, string>,
  cpu: number | undefined,
  gc = false,
  nodeArgs: readonly string[] = [],
): Child {
  const args = [
    ...nodeArgs,
    ...(gc ? ['--expose-gc'] : []),
    '--conditions=ctrlmetrics-source',
    '--import',
    'tsx',
    join(REPO_ROOT, script),
  ];
  const [cmd, argv] =
    cpu === undefined ? [process.execPath, args] : ['taskset', ['-c', String(cpu), process.execPath, ...args]];
  const child = spawnTracked(cmd, argv, {
    cwd: REPO_ROOT,
    env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'error', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const last = new Map<string, Record<string, number>>();
  const stderr = readJsonLines<Record<string, number> & { event: string }>(child, (e) => last.set(e.event, e));
  const waitFor = async (event: string, timeoutMs: number, after = 0) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = last.get(event);
      if (e && e.at >= after) return e;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${script} exited before "${event}": ${stderr()}`);
      if (Date.now() > deadline) throw new Error(`no "${event}" from ${script} within ${timeoutMs} ms: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const ask = async (line: string, event: string) => {
    const asked = Date.now();
    child.stdin!.write(`${line}\n`);
    return waitFor(event, 60_000, asked);
  };
  return { child, last, waitFor, ask };
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`sharding: timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function createMany(cluster: TestCluster, namespace: string, n: number, prefix: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++)
      await cluster.admin.create(`/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${prefix}-${i}`, namespace },
        data: { index: String(i), payload: 'x'.repeat(200) },
      });
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** The shard of every ConfigMap of `namespace` (metadata only; undefined while unassigned or draining). */
async function assignments(
  cluster: TestCluster,
  namespace: string,
  ring: string,
): Promise<Map<string, string | undefined>> {
  const labels = shardingLabels(ring);
  const list = await cluster.admin.get<{
    items: Array<{ metadata: { name: string; labels?: Record<string, string> } }>;
  }>(`/api/v1/namespaces/${namespace}/configmaps`, {
    headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' },
  });
  // an object being drained counts as on no shard yet
  return new Map(
    list.items.map((o) => [
      o.metadata.name,
      o.metadata.labels?.[labels.drain] !== undefined ? undefined : o.metadata.labels?.[labels.shard],
    ]),
  );
}

/** Measures the scaling cells and the memory cells. */
export async function measureSharding(
  cluster: TestCluster,
  opts: { objects: number; memoryObjects: number; reps: number; windowS: number; pin: boolean },
  progress: (msg: string) => void = () => undefined,
): Promise<ShardingResult> {
  await installCrd(cluster.admin, controllerRingCrd());
  const hooks = await installWebhooks(cluster.authority, { manifests: [] });
  const restConfig = JSON.stringify(cluster.authority.restConfig);
  const sharder = spawnChild(
    'bench/servers/sharder-process.ts',
    {
      SHARDER_CONFIG: JSON.stringify({
        restConfig: cluster.authority.restConfig,
        webhook: hooks.bindAddress,
        certDir: hooks.certDir,
        caPem: hooks.caPem,
        syncPeriodMs: 5_000,
      }),
    },
    undefined,
    true,
    // as config/sharding deploys it: the manager's NODE_OPTIONS (a young generation that stays small)
    OURS_NODE_ARGS,
  );
  const running = new Map<string, Child>();
  try {
    await sharder.waitFor('ready', 60_000);
    const ring = async (name: string, namespace: string) => {
      await cluster.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: { ring: name } },
      });
      await cluster.admin.create('/apis/sharding.timebertt.dev/v1alpha1/controllerrings', {
        apiVersion: 'sharding.timebertt.dev/v1alpha1',
        kind: 'ControllerRing',
        metadata: { name },
        spec: {
          resources: [{ group: '', resource: 'configmaps' }],
          namespaceSelector: { matchLabels: { ring: name } },
        },
      });
    };
    const shardEnv = (ns: string, ringName: string, shardName: string | undefined, mode: Mode | 'idle') => ({
      SHARD_CONFIG: JSON.stringify({
        restConfig: JSON.parse(restConfig) as unknown,
        namespace: ns,
        ring: ringName,
        leaseNamespace: ns,
        mode,
        ...(shardName ? { shardName } : {}),
      }),
    });

    // throughput
    const NS = 'bench-shards';
    await ring('bench', NS);
    progress(`sharding: ${opts.objects} ConfigMaps in ring "bench"`);
    await createMany(cluster, NS, opts.objects, 'obj');
    const cells: ShardingScaleCell[] = [];
    for (const mode of ['latency', 'cpu'] as const) {
      const counts = mode === 'latency' ? [1, 2, 3] : [1, 2];
      for (const n of counts) cells.push({ mode, shards: n, rates: [], queueP99s: [] });
      for (let rep = 0; rep < opts.reps; rep++) {
        for (const n of rep % 2 ? [...counts].reverse() : counts) {
          // exactly shard-0 … shard-(n-1), in this mode
          for (const [name, c] of running)
            if (Number(name.slice('shard-'.length)) >= n) {
              await stopChild(c.child, 10_000);
              running.delete(name);
            }
          for (let i = 0; i < n; i++) {
            const name = `shard-${i}`;
            if (running.has(name)) continue;
            const c = spawnChild(
              'bench/servers/shard-manager.ts',
              shardEnv(NS, 'bench', name, mode),
              mode === 'cpu' && opts.pin ? i % 2 : undefined,
            );
            await c.waitFor('ready', 60_000);
            running.set(name, c);
          }
          const live = new Set(running.keys());
          await until(
            `every object on one of ${n} shard(s), no drain pending`,
            async () =>
              [...(await assignments(cluster, NS, 'bench')).values()].every((s) => s !== undefined && live.has(s)),
            60_000,
          );
          await new Promise((r) => setTimeout(r, 3_000));
          for (const c of running.values()) await c.ask('queue', 'queue');
          const start = new Map([...running].map(([k, c]) => [k, c.last.get('count')!]));
          await new Promise((r) => setTimeout(r, opts.windowS * 1000));
          let rate = 0;
          let p99 = 0;
          const each: string[] = [];
          for (const [k, c] of running) {
            const end = c.last.get('count')!;
            const begin = start.get(k)!;
            const r = ((end.n - begin.n) * 1000) / (end.at - begin.at);
            rate += r;
            each.push(r.toFixed(0));
            p99 = Math.max(p99, (await c.ask('queue', 'queue')).p99Seconds ?? 0);
          }
          const cell = cells.find((c) => c.mode === mode && c.shards === n)!;
          cell.rates.push(rate);
          cell.queueP99s.push(p99);
          progress(
            `sharding ${mode}: ${n} shard(s) ${rate.toFixed(0)} reconciles/s (${each.join(' + ')}), queue p99 ${p99.toFixed(2)} s`,
          );
        }
      }
      for (const c of running.values()) await stopChild(c.child, 10_000);
      running.clear();
    }
    const sharderAt1k = await sharder.ask('rss', 'rss');

    // memory
    const MEM = 'bench-memory';
    await ring('memory', MEM);
    progress(`sharding: ${opts.memoryObjects} ConfigMaps in ring "memory"`);
    for (let i = 0; i < 3; i++) {
      const c = spawnChild(
        'bench/servers/shard-manager.ts',
        shardEnv(MEM, 'memory', `mem-${i}`, 'idle'),
        undefined,
        true,
      );
      await c.waitFor('ready', 60_000);
      running.set(`mem-${i}`, c);
    }
    await createMany(cluster, MEM, opts.memoryObjects, 'mem');
    await until(
      'every object of ring "memory" assigned and cached',
      async () => {
        const a = [...(await assignments(cluster, MEM, 'memory')).values()];
        const cached = [...running.values()].reduce((sum, c) => sum + (c.last.get('count')?.keys ?? 0), 0);
        return a.every((s) => s?.startsWith('mem-')) && cached >= a.length;
      },
      300_000,
    );
    const shardHeapMb: number[] = [];
    for (const c of running.values()) shardHeapMb.push((await c.ask('heap', 'heap')).heapUsed / MB);
    // a pass of the sharder over both rings since the last object came
    await new Promise((r) => setTimeout(r, 6_000));
    const sharderAt31k = await sharder.ask('rss', 'rss');
    for (const c of running.values()) await stopChild(c.child, 10_000);
    running.clear();
    const single = spawnChild(
      'bench/servers/shard-manager.ts',
      shardEnv(MEM, 'memory', undefined, 'idle'),
      undefined,
      true,
    );
    await single.waitFor('ready', 120_000);
    await until(
      'the single manager caching every object',
      async () => (single.last.get('count')?.keys ?? 0) >= opts.memoryObjects,
      120_000,
    );
    const singleHeapMb = (await single.ask('heap', 'heap')).heapUsed / MB;
    await stopChild(single.child, 10_000);
    return {
      objects: opts.objects,
      reps: opts.reps,
      windowS: opts.windowS,
      cells,
      memory: {
        objects: opts.memoryObjects,
        singleHeapMb,
        shardHeapMb,
        sharderRssMb: [
          { objects: opts.objects, rssMb: sharderAt1k.rss / MB, heapMb: sharderAt1k.heapUsed / MB },
          {
            objects: opts.objects + opts.memoryObjects,
            rssMb: sharderAt31k.rss / MB,
            heapMb: sharderAt31k.heapUsed / MB,
          },
        ],
      },
    };
  } finally {
    for (const c of running.values()) await stopChild(c.child, 10_000);
    await stopChild(sharder.child, 10_000);
    await hooks.uninstall();
  }
}

/** The Markdown tables of a sharding measurement. */
export function shardingTables(r: ShardingResult): string[] {
  const out: string[] = [
    '| reconcile | shards | reconciles/s | × 1 shard | queue-duration p99, s |',
    '|---|---|---|---|---|',
  ];
  for (const c of r.cells) {
    const one = r.cells.find((x) => x.mode === c.mode && x.shards === 1)!;
    out.push(
      `| ${c.mode === 'latency' ? 'latency-bound (20 ms wait)' : 'CPU-bound (2 ms, pinned)'} | ${c.shards} | ${range(c.rates)} | ${(median(c.rates) / median(one.rates)).toFixed(2)} | ${range(c.queueP99s, 2)} |`,
    );
  }
  if (r.memory) {
    const m = r.memory;
    out.push(
      '',
      `| ${m.objects} objects | heap after a full GC, MB | ÷ one manager |`,
      '|---|---|---|',
      `| one manager caching all | ${m.singleHeapMb.toFixed(1)} | 1.00 |`,
      ...m.shardHeapMb.map((h, i) => `| shard ${i + 1} of 3 | ${h.toFixed(1)} | ${(h / m.singleHeapMb).toFixed(2)} |`),
      '',
      '| sharder, objects in its rings | RSS MB | heap MB |',
      '|---|---|---|',
      ...m.sharderRssMb.map((s) => `| ${s.objects} | ${s.rssMb.toFixed(1)} | ${s.heapMb.toFixed(1)} |`),
    );
  }
  return out;
}
