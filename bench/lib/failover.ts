/**
 * Failover with and without warm replicas: a leader and a standby (bench/servers/failover-manager.ts, each its own
 * process) over `objects` cached ConfigMaps; once the standby is ready, the leader is killed (SIGKILL: the Lease is
 * not released, so the standby waits for it to expire) and the standby's way to leading is timed: kill → Lease won,
 * Lease won → first reconcile, kill → first reconcile, kill → every object reconciled. Variants alternate within a
 * repetition; the lease timing (2 s / 1.5 s / 0.2 s) is the same for both.
 */
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { readJsonLines, spawnTracked, stopChild } from './children.js';
import { REPO_ROOT } from './servers.js';
import type { TestCluster } from '../../test/helpers/cluster.js';

export interface FailoverCell {
  warmup: boolean;
  /** kill → the standby leads, ms */
  toLeadMs: number[];
  /** the standby leads → its first reconcile, ms */
  leadToReconcileMs: number[];
  /** kill → first reconcile, ms */
  toFirstReconcileMs: number[];
  /** kill → every object reconciled, ms */
  toAllReconciledMs: number[];
}

export interface FailoverResult {
  objects: number;
  reps: number;
  cells: FailoverCell[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const stat = (xs: number[]) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;

type Replica = {
  child: ChildProcess;
  events: Map<string, number>;
  waitFor: (event: string, timeoutMs: number) => Promise<number>;
};

function replica(
  cluster: TestCluster,
  cfg: { namespace: string; leaseId: string; expected: number; warmup: boolean },
  cpu: number | undefined,
): Replica {
  const args = [
    '--conditions=ctrlmetrics-source',
    '--import',
    'tsx',
    join(REPO_ROOT, 'bench/servers/failover-manager.ts'),
  ];
  const [cmd, argv] =
    cpu === undefined ? [process.execPath, args] : ['taskset', ['-c', String(cpu), process.execPath, ...args]];
  const child = spawnTracked(cmd, argv, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      CTRLMETRICS_LOG_LEVEL: 'error',
      FAILOVER_CONFIG: JSON.stringify({
        restConfig: cluster.authority.restConfig,
        labelSelector: 'bench=failover',
        ...cfg,
      }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events = new Map<string, number>();
  const stderr = readJsonLines<{ event: string; at: number }>(child, (e) => {
    if (!events.has(e.event)) events.set(e.event, e.at);
  });
  const waitFor = async (event: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!events.has(event)) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the replica exited before "${event}": ${stderr()}`);
      if (Date.now() > deadline) throw new Error(`no "${event}" from the replica within ${timeoutMs} ms: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return events.get(event)!;
  };
  return { child, events, waitFor };
}

/** Creates `n` labelled ConfigMaps in `namespace`, 32 requests at a time. */
async function populate(cluster: TestCluster, namespace: string, n: number): Promise<void> {
  await cluster.admin.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await cluster.admin.create(`/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace, labels: { bench: 'failover' } },
        data: { index: String(i), payload: 'x'.repeat(200) },
      });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/**
 * Measures failover `reps` times per variant (cold, warm; alternated). With `pin`, the leader runs on CPU 0 and the
 * standby on CPU 1 (the authority shares the benchmark's process).
 */
export async function measureFailover(
  cluster: TestCluster,
  objects: number,
  reps: number,
  pin: boolean,
  progress: (msg: string) => void = () => undefined,
): Promise<FailoverResult> {
  const namespace = 'bench-failover';
  progress(`failover: creating ${objects} ConfigMaps`);
  await populate(cluster, namespace, objects);
  const cells: FailoverCell[] = [false, true].map((warmup) => ({
    warmup,
    toLeadMs: [],
    leadToReconcileMs: [],
    toFirstReconcileMs: [],
    toAllReconciledMs: [],
  }));
  let round = 0;
  for (let rep = 0; rep < reps; rep++) {
    for (const cell of rep % 2 ? [...cells].reverse() : cells) {
      const cfg = { namespace, leaseId: `failover-${round++}`, expected: objects, warmup: cell.warmup };
      const leader = replica(cluster, cfg, pin ? 0 : undefined);
      let standby: Replica | undefined;
      try {
        await leader.waitFor('all-reconciled', 120_000);
        standby = replica(cluster, cfg, pin ? 1 : undefined);
        await standby.waitFor('ready', 120_000);
        // the standby settled (its warm queue filled); nothing reconciled there yet
        await new Promise((r) => setTimeout(r, 1_000));
        if (standby.events.has('first-reconcile')) throw new Error('the standby reconciled before it led');
        const killedAt = Date.now();
        leader.child.kill('SIGKILL');
        const leading = await standby.waitFor('leading', 60_000);
        const first = await standby.waitFor('first-reconcile', 60_000);
        const all = await standby.waitFor('all-reconciled', 120_000);
        cell.toLeadMs.push(leading - killedAt);
        cell.leadToReconcileMs.push(first - leading);
        cell.toFirstReconcileMs.push(first - killedAt);
        cell.toAllReconciledMs.push(all - killedAt);
        progress(
          `failover ${cell.warmup ? 'warm' : 'cold'}: kill → first reconcile ${first - killedAt} ms (leading → first ${first - leading} ms)`,
        );
      } finally {
        await stopChild(leader.child);
        if (standby) await stopChild(standby.child);
      }
    }
  }
  return { objects, reps, cells };
}

/** The Markdown table of a failover measurement. */
export function failoverTable(r: FailoverResult): string[] {
  return [
    '| standby | kill → leading ms | leading → first reconcile ms | kill → first reconcile ms | kill → all reconciled ms |',
    '|---|---|---|---|---|',
    ...r.cells.map(
      (c) =>
        `| ${c.warmup ? 'warm (`enableWarmup`)' : 'cold'} | ${stat(c.toLeadMs)} | ${stat(c.leadToReconcileMs)} | ${stat(c.toFirstReconcileMs)} | ${stat(c.toAllReconciledMs)} |`,
    ),
    ...ratioRow(r),
  ];
}

/** warm ÷ cold of each column's medians. */
function ratioRow(r: FailoverResult): string[] {
  const cold = r.cells.find((c) => !c.warmup);
  const warm = r.cells.find((c) => c.warmup);
  if (!cold || !warm) return [];
  const ratio = (f: (c: FailoverCell) => number[]) => (median(f(warm)) / median(f(cold))).toFixed(2);
  return [
    `| warm ÷ cold | ${ratio((c) => c.toLeadMs)} | ${ratio((c) => c.leadToReconcileMs)} | ${ratio((c) => c.toFirstReconcileMs)} | ${ratio((c) => c.toAllReconciledMs)} |`,
  ];
}
