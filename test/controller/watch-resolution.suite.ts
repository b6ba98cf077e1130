// Watches take their resource and scope from the API's discovery, never from a guessed plural: kinds whose plural a
// guess gets wrong (Endpoints), built-in kinds of other groups, a cluster-scoped CRD with an irregular plural that is
// installed after the manager started, and specs that contradict discovery. Run against the authority
// (test/controller/watch-resolution.test.ts) and a real kube-apiserver (test/real-api/watch-resolution.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, Manager, type KubeClient, type RestConfig } from '../../packages/ctrlmetrics/src/index.js';
import { ManagerError } from '../../packages/ctrlmetrics/src/exports/manager.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/exports/log.js';
import { eventually } from './helpers/exposition.js';

/** Where the suite runs: cluster-admin credentials, and how to let go of the server. */
export interface WatchResolutionTarget {
  restConfig: RestConfig;
  admin: KubeClient;
  stop(): Promise<void>;
}

/**
 * Registers the suite. `prefix` names its namespaces, objects and controllers (a real cluster's run id in it; the
 * metrics registry is the process's); `group` is the API group of its CRD (one per run on a shared cluster).
 */
export function watchResolutionSuite(
  name: string,
  start: () => Promise<WatchResolutionTarget>,
  prefix: string,
  group: string,
): void {
  describe(name, () => {
    let target: WatchResolutionTarget;
    const crdName = `octopodes.${group}`;
    before(async () => {
      target = await start();
    });
    after(async () => {
      await target?.admin
        .delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`)
        .catch(() => undefined);
      await target?.stop();
    });

    const managerOptions = () => ({
      restConfig: target.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
    });

    it('Endpoints, Ingress and NetworkPolicy are watched under the resources discovery names (a guess said endpointses)', async () => {
      const ns = `${prefix}-kinds`;
      await target.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const kinds = [
        {
          apiVersion: 'v1',
          kind: 'Endpoints',
          collection: `/api/v1/namespaces/${ns}/endpoints`,
          body: { subsets: [] },
        },
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          collection: `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
          body: { spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } },
        },
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          collection: `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
          body: { spec: { podSelector: {} } },
        },
      ];
      const seen = new Map<string, string[]>();
      const mgr = new Manager(managerOptions());
      for (const k of kinds) {
        mgr.add(
          new Controller({
            name: `${prefix}-${k.kind.toLowerCase()}`,
            watches: [{ apiVersion: k.apiVersion, kind: k.kind, namespace: ns }],
            reconciler: async (req, ctx) => {
              // the cache holds the object under its apiVersion and kind
              const cached = ctx.cache.get({ apiVersion: k.apiVersion, kind: k.kind }, req.namespace, req.name);
              if (cached) seen.set(k.kind, [...(seen.get(k.kind) ?? []), req.name]);
            },
          }),
        );
      }
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        await Promise.race([mgr.ready(), running]);
        for (const k of kinds)
          await target.admin.create(k.collection, {
            apiVersion: k.apiVersion,
            kind: k.kind,
            metadata: { name: `${prefix}-one` },
            ...k.body,
          });
        await eventually(
          () => kinds.every((k) => seen.get(k.kind)?.includes(`${prefix}-one`)),
          'a reconcile of each kind',
          15_000,
          20,
        );
      } finally {
        stop.abort();
        await running;
      }
    });

    it('a cluster-scoped CRD with an irregular plural, installed after the manager started: the watch waits for discovery, then reconciles', async () => {
      const seen: string[] = [];
      const lines: string[] = [];
      const mgr = new Manager(managerOptions());
      mgr.add(
        new Controller({
          name: `${prefix}-octopus`,
          cacheSyncTimeoutMs: 60_000,
          watches: [{ apiVersion: `${group}/v1`, kind: 'Octopus' }],
          reconciler: async (req, ctx) => {
            assert.equal(req.namespace, undefined, 'a cluster-scoped request');
            if (ctx.cache.get('Octopus', undefined, req.name)) seen.push(req.name);
          },
        }),
      );
      const logs: string[] = [];
      const prevSink = setLogSink((l) => logs.push(l));
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      running.catch((err: Error) => lines.push(err.message));
      try {
        // the kind is not served yet: the watch says so, and asks again
        await eventually(
          () =>
            logs.some(
              (l) =>
                l.includes('watch not started: its kind is not resolved') &&
                l.includes(`the API server does not serve Octopus (${group}/v1): install the CRD of Octopus`),
            ),
          'the watch to report the kind not served',
          10_000,
          20,
        );
        await target.admin.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: crdName },
          spec: {
            group,
            scope: 'Cluster',
            names: { plural: 'octopodes', singular: 'octopus', kind: 'Octopus', listKind: 'OctopusList' },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: {
                  openAPIV3Schema: {
                    type: 'object',
                    properties: { spec: { type: 'object', properties: { arms: { type: 'integer' } } } },
                  },
                },
              },
            ],
          },
        });
        await Promise.race([mgr.ready(), running]);
        await eventually(
          async () => {
            try {
              return await target.admin.create(`/apis/${group}/v1/octopodes`, {
                apiVersion: `${group}/v1`,
                kind: 'Octopus',
                metadata: { name: `${prefix}-paul` },
                spec: { arms: 8 },
              });
            } catch {
              return undefined; // the CRD is not established yet
            }
          },
          'the CRD to serve its kind',
          15_000,
          100,
        );
        await eventually(() => seen.includes(`${prefix}-paul`), 'a reconcile of the Octopus', 15_000, 20);
        assert.deepEqual(lines, []);
      } finally {
        setLogSink(prevSink);
        stop.abort();
        await running.catch(() => undefined);
      }
    });

    it('a resource or scope that discovery contradicts fails the start at once, naming the kind and what the API serves', async () => {
      const cases = [
        {
          watch: { apiVersion: 'v1', kind: 'Endpoints', resource: 'endpointses' },
          message:
            /^controller [\w-]+: watch of Endpoints \(v1\): resource "endpointses" is not the API's resource of the kind, "endpoints": drop the option \(discovery names it\)$/,
        },
        {
          watch: { apiVersion: 'v1', kind: 'ConfigMap', clusterScoped: true },
          message:
            /^controller [\w-]+: watch of ConfigMap \(v1\): clusterScoped is true, but the API serves ConfigMap as namespaced: drop the option \(discovery says it\)$/,
        },
      ];
      for (const [i, c] of cases.entries()) {
        const mgr = new Manager(managerOptions());
        mgr.add(
          new Controller({ name: `${prefix}-wrong-${i}`, watches: [c.watch], reconciler: async () => undefined }),
        );
        const t0 = performance.now();
        await assert.rejects(mgr.start(), (err: Error) => {
          assert.ok(err instanceof ManagerError, String(err));
          assert.match(err.message, c.message);
          return true;
        });
        assert.ok(performance.now() - t0 < 10_000, 'not after the sync timeout');
      }
    });
  });
}
