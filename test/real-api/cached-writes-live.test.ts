/**
 * A reconcile that writes back what it read from the cache, on a real kube-apiserver and on the authority: a
 * ConfigMap that existed before the manager started reaches the cache through the first list, whose items
 * kube-apiserver sends without apiVersion and kind. `ctx.cache`, `ctx.client.get` (answered from the cache) and
 * `ctx.client.update` of what it read must work the same as for an object that came through a watch.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Controller,
  Manager,
  type KubeClient,
  type KubeObject,
  type RestConfig,
} from '../../packages/ctrlmetrics/src/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';
import { eventually } from '../helpers/process.js';

const NS = runName('cached-writes');
const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
type ConfigMap = KubeObject & { data?: Record<string, string> };

describe(
  'writing back a cached object: a real kube-apiserver and the authority alike',
  { skip: REAL_KUBE_SKIP, timeout: 180_000 },
  () => {
    let kube: RealKube;
    let authority: TestCluster;

    before(async () => {
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
    });
    after(async () => {
      await kube?.admin.delete(`/api/v1/namespaces/${NS}`).catch(() => undefined);
      await Promise.all([kube?.stop(), authority?.stop()]);
    });

    /** Runs a manager whose reconcile marks each ConfigMap through ctx.client; answers what it saw and wrote. */
    async function markAll(
      admin: KubeClient,
      restConfig: RestConfig,
    ): Promise<{ cachedTypes: string[]; marked: string[] }> {
      await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
        ...CM,
        metadata: { name: 'listed', labels: { app: 'mark' } },
        data: { a: '1' },
      });
      const cachedTypes = new Set<string>();
      const mgr = new Manager({
        restConfig,
        handleSignals: false,
        metrics: { bindAddress: '0' },
        healthProbeBindAddress: '0',
      });
      mgr.add(
        new Controller({
          name: 'marker',
          watches: [
            { ...CM, namespace: NS, labelSelector: 'app=mark' },
            { ...CM, namespace: NS },
          ],
          reconciler: async (req, ctx) => {
            const seen = ctx.cache.get<ConfigMap>('ConfigMap', req.namespace, req.name);
            if (!seen || seen.data?.marked) return;
            cachedTypes.add(`${String(seen.apiVersion)} ${String(seen.kind)}`);
            const cm = await ctx.client.get<ConfigMap>(CM, req); // from the cache (a whole-namespace watch)
            cm.data = { ...cm.data, marked: 'yes' };
            await ctx.client.update(cm);
          },
        }),
      );
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        await mgr.ready();
        await admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
          ...CM,
          metadata: { name: 'watched', labels: { app: 'mark' } },
          data: { b: '2' },
        });
        const marked = await eventually(
          async () => {
            const list = await admin.get<{ items: ConfigMap[] }>(
              `/api/v1/namespaces/${NS}/configmaps?labelSelector=app%3Dmark`,
            );
            const names = list.items
              .filter((o) => o.data?.marked === 'yes')
              .map((o) => String(o.metadata?.name))
              .sort();
            return names.length === 2 ? names : undefined;
          },
          'both ConfigMaps marked',
          30_000,
          50,
        );
        return { cachedTypes: [...cachedTypes].sort(), marked };
      } finally {
        stop.abort();
        await running;
      }
    }

    test('an object from the first list is cached with its type and can be updated as read', async () => {
      const [onKube, onAuthority] = [
        await markAll(kube.admin, kube.adminConfig),
        await markAll(authority.admin, authority.authority.restConfig),
      ];
      assert.deepEqual(onKube, { cachedTypes: ['v1 ConfigMap'], marked: ['listed', 'watched'] });
      assert.deepEqual(onAuthority, onKube);
    });
  },
);
