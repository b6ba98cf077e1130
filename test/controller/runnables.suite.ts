// Runnables and warm replicas with a Lease held by another replica: what runs on a standby (runnables and
// controllers with needLeaderElection: false, warm controllers' watches) and what waits for the Lease. Run against
// the authority (test/controller/runnables.test.ts) and a real kube-apiserver (test/real-api/runnables.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, KubeClient, Manager, type RestConfig } from '../../packages/ctrlmetrics/src/index.js';
import type { Runnable } from '../../packages/ctrlmetrics/src/exports/manager.js';
import { LeaderElector } from '../../packages/ctrlmetrics/src/manager/index.js';
import { eventually, samples } from './helpers/exposition.js';
import { scrapeRegistry } from './helpers/scrape.js';

/** Where the suite runs: cluster-admin credentials, and how to let go of the server. */
export interface RunnablesTarget {
  restConfig: RestConfig;
  admin: KubeClient;
  stop(): Promise<void>;
}

/** A runnable that records its start and stop, and runs until its signal aborts. */
export function recording(
  name: string,
  log: string[],
  opts: { needLeaderElection?: boolean; onStop?: () => Promise<void> } = {},
): Runnable & { running: boolean } {
  const r = {
    name,
    needLeaderElection: opts.needLeaderElection,
    running: false,
    async start(signal: AbortSignal) {
      r.running = true;
      log.push(`${name} started`);
      await new Promise<void>((res) => signal.addEventListener('abort', () => res(), { once: true }));
      log.push(`${name} stopping`);
      await opts.onStop?.();
      r.running = false;
      log.push(`${name} stopped`);
    },
  };
  return r;
}

/** The queued items of a controller (all priorities), from this process's registry. */
async function depth(controller: string): Promise<number | undefined> {
  const found = samples(await scrapeRegistry(), 'workqueue_depth', { controller });
  return found.length ? found.reduce((n, s) => n + s.value, 0) : undefined;
}

/**
 * Registers the suite. `prefix` names its namespaces (a real cluster's run id in it); the controllers' names carry
 * it too, since the metrics registry is the process's.
 */
export function runnablesSuite(name: string, start: () => Promise<RunnablesTarget>, prefix: string): void {
  describe(name, () => {
    let target: RunnablesTarget;
    before(async () => {
      target = await start();
    });
    after(async () => {
      await target?.stop();
    });

    const namespace = async (suffix: string) => {
      const ns = `${prefix}-${suffix}`;
      await target.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      return ns;
    };
    /** Another replica holding the Lease until `release()`. */
    const holdLease = async (ns: string, id: string) => {
      const other = new LeaderElector(new KubeClient(target.restConfig), {
        id,
        namespace: ns,
        identity: 'other',
        leaseDurationMs: 2_000,
        retryPeriodMs: 200,
        renewDeadlineMs: 1_500,
        releaseOnCancel: true,
      });
      const stop = new AbortController();
      assert.equal(await other.acquire(stop.signal), true);
      const renewing = other.renewLoop(stop.signal);
      return {
        release: async () => {
          stop.abort();
          await renewing;
          await other.release();
        },
      };
    };
    const leaderOptions = (ns: string, id: string) => ({
      restConfig: target.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '127.0.0.1:0',
      leaderElection: true,
      leaderElectionID: id,
      leaderElectionNamespace: ns,
      leaderElectionReleaseOnCancel: true,
      leaseDurationMs: 2_000,
      renewDeadlineMs: 1_500,
      retryPeriodMs: 200,
    });
    const configMaps = async (ns: string, label: string, n: number) => {
      for (let i = 0; i < n; i++) {
        await target.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${i}`, namespace: ns, labels: { test: label } },
        });
      }
    };

    it('on a standby, runnables and controllers with needLeaderElection: false run; the others wait for the Lease', async () => {
      const ns = await namespace('standby');
      const other = await holdLease(ns, 'runnables-lock');
      const mgr = new Manager(leaderOptions(ns, 'runnables-lock'));
      const log: string[] = [];
      const everywhere = recording('everywhere', log, { needLeaderElection: false });
      const leaderOnly = recording('leader-only', log);
      const reconciled = { everyReplica: 0, leader: 0 };
      const watches = [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'test=runnables' }];
      mgr.add(everywhere).add(leaderOnly);
      mgr.add(
        new Controller({
          name: `${prefix}-every-replica`,
          needLeaderElection: false,
          reconciler: async () => void reconciled.everyReplica++,
          watches,
        }),
      );
      mgr.add(new Controller({ name: `${prefix}-leader`, reconciler: async () => void reconciled.leader++, watches }));
      await configMaps(ns, 'runnables', 1);
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        await eventually(
          () => reconciled.everyReplica === 1,
          'the every-replica controller to reconcile on the standby',
          15_000,
          20,
        );
        assert.equal(everywhere.running, true);
        // the standby keeps trying for the Lease (retry period 200 ms): several rounds, and still nothing that needs it ran
        await new Promise((r) => setTimeout(r, 600));
        assert.equal(leaderOnly.running, false, 'a runnable that needs the Lease waits for it');
        assert.equal(reconciled.leader, 0, 'a controller that needs the Lease waits for it');
        // added on the standby: one that needs no Lease starts at once, one that needs it waits with the others
        const late = recording('late-everywhere', log, { needLeaderElection: false });
        const lateLeader = recording('late-leader', log);
        mgr.add(late).add(lateLeader);
        await eventually(() => late.running, 'a runnable added after start to start at once', 5_000, 10);
        assert.equal(lateLeader.running, false);
        await other.release();
        await mgr.ready();
        await eventually(
          () => reconciled.leader === 1 && leaderOnly.running && lateLeader.running,
          'the leader runnables to start once leading',
          15_000,
          20,
        );
        assert.equal(
          reconciled.everyReplica,
          1,
          'no second reconcile of the every-replica controller on becoming leader',
        );
      } finally {
        stop.abort();
        await running;
      }
      assert.deepEqual(
        [
          everywhere.running,
          leaderOnly.running,
          log.indexOf('everywhere stopping') < log.indexOf('leader-only stopping'),
        ],
        [false, false, true],
        "every-replica runnables stop before the leader's (controller-runtime's order)",
      );
    });

    it('a warm standby lists and queues before it leads, reconciles only once leading; a controller that opts out stays cold', async () => {
      const ns = await namespace('warmup');
      await configMaps(ns, 'warmup', 20);
      const other = await holdLease(ns, 'warmup-lock');
      const mgr = new Manager({ ...leaderOptions(ns, 'warmup-lock'), enableWarmup: true });
      const reconciled = { warm: 0, cold: 0 };
      const warm = `${prefix}-warm`;
      const cold = `${prefix}-cold`;
      const watches = [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'test=warmup' }];
      mgr.add(new Controller({ name: warm, reconciler: async () => void reconciled.warm++, watches }));
      mgr.add(
        new Controller({
          name: cold,
          enableWarmup: false,
          reconciler: async () => void reconciled.cold++,
          watches: [{ ...watches[0], labelSelector: 'test=warmup,cold!=x' }],
        }),
      );
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        // the standby's warm controller listed all 20 and queued them; nothing was reconciled
        await eventually(
          async () => (await depth(warm)) === 20,
          'the warm controller to queue the initial list on the standby',
          15_000,
          20,
        );
        assert.equal(await depth(cold), undefined, 'the controller that opted out did not start its watches');
        const ready = await fetch(`${mgr.healthProbeServer!.url}/readyz?verbose`);
        assert.equal(ready.status, 200, await ready.text());
        await new Promise((r) => setTimeout(r, 600));
        assert.deepEqual(reconciled, { warm: 0, cold: 0 }, 'no reconcile before leading');
        await other.release();
        await mgr.ready();
        await eventually(
          () => reconciled.warm === 20 && reconciled.cold === 20,
          'both controllers to reconcile everything once leading',
          15_000,
          20,
        );
        assert.equal(await depth(warm), 0);
      } finally {
        stop.abort();
        await running;
      }
    });
  });
}
