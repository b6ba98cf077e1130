/**
 * The sharder of timebertt/kubernetes-controller-sharding's protocol, as three controllers and a webhook on a
 * manager (`new Sharder(options).setupWithManager(mgr)`; `ctrlmetrics sharder` runs one):
 *
 * - **membership** (every replica): reads each ControllerRing and the Leases labelled with it into the
 *   {@link RingMembership} the webhook answers from, and registers the ring's webhook path;
 * - **the ring** (the leader): writes the ring's MutatingWebhookConfiguration, its status, and rebalances its
 *   objects (rebalance.ts) when its available shards change and every `syncPeriodMs`;
 * - **shard leases** (the leader): keeps each shard Lease's state label, takes over the Lease of an uncertain shard
 *   (so its objects move) and deletes orphaned ones (lease-state.ts).
 *
 * The sharder keeps no cache of the sharded objects: it lists their metadata, page by page, when it rebalances.
 */
import { Controller } from '../controller/controller.js';
import { shardingLabels, type ShardingLabels } from '../controller/sharding.js';
import type { KubeObject, ReconcileContext } from '../controller/types.js';
import { KubeApiError } from '../kube/client.js';
import type { Manager } from '../manager/manager.js';
import { assignmentHandler, webhookPath } from './webhook.js';
import { errored } from '../webhook/admission.js';
import { RingMembership } from './membership.js';
import { CONTROLLER_RING_API_VERSION, DEFAULT_NAMESPACE_SELECTOR, type ControllerRing } from './controllerring.js';
import { readLease, takenOver, type ShardLease, type ShardState } from './lease-state.js';
import { rebalance } from './rebalance.js';
import * as m from './metrics.js';

/** How kube-apiserver reaches the sharder's webhook server. */
export interface SharderWebhookClientConfig {
  /** `https://host:port` of the webhook server, when not reached through a Service. */
  url?: string;
  /** The Service in front of the sharder's webhook server. */
  service?: { namespace: string; name: string; port?: number };
  /** The PEM of the CA that signed the webhook server's certificate (or its base64). */
  caBundle: string;
}

/** Options of a {@link Sharder}. */
export interface SharderOptions {
  /** How kube-apiserver reaches the webhook (written into each ring's MutatingWebhookConfiguration). */
  webhook: SharderWebhookClientConfig;
  /** How often each ring is rebalanced besides when its shards change (default 5 min, TKCS's). */
  syncPeriodMs?: number;
  /** Hand-overs in flight at once (default 100, TKCS's). */
  concurrentMoves?: number;
  /** The label keys' prefix (default TKCS's `alpha.sharding.timebertt.dev`). */
  labelPrefix?: string;
  /** Wall clock in epoch ms (tests). */
  now?: () => number;
}

const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' } as const;
const RING = { apiVersion: CONTROLLER_RING_API_VERSION, kind: 'ControllerRing' } as const;
const STATES: readonly ShardState[] = ['ready', 'expired', 'uncertain', 'dead', 'orphaned'];
/** A little after a Lease's state changes, so that the change has happened when it is read. */
const AFTER_CHANGE_MS = 100;

/** The name of a ring's MutatingWebhookConfiguration. */
export const webhookConfigurationName = (ring: string): string => `controllerring-${ring}`;

/** Runs the sharder's controllers and webhook on a manager. */
export class Sharder {
  private readonly membership = new RingMembership();
  private readonly labels: ShardingLabels;
  private readonly syncPeriodMs: number;
  private readonly now: () => number;
  private readonly registered = new Set<string>();
  private ringController: Controller | undefined;
  private mgr: Manager | undefined;
  /** The ring of each shard Lease seen, by `namespace/name`: the series of a Lease that is gone are removed. */
  private readonly leaseRings = new Map<string, string>();

  constructor(private readonly opts: SharderOptions) {
    if (!opts.webhook?.caBundle || (!opts.webhook.url && !opts.webhook.service))
      throw new Error('sharder: webhook needs a caBundle and either a url or a service');
    this.labels = shardingLabels('x', opts.labelPrefix);
    this.syncPeriodMs = opts.syncPeriodMs ?? 5 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** The label keys of `ring`. */
  labelsOf(ring: string): ShardingLabels {
    return shardingLabels(ring, this.opts.labelPrefix);
  }

  /** Adds the sharder's controllers to `mgr` (before it starts); the webhook paths are registered as rings appear. */
  setupWithManager(mgr: Manager): void {
    this.mgr = mgr;
    // the rings' paths are registered as the rings appear; this one, registered now, has the webhook server start
    // with the manager, and answers a configuration that names no ring
    mgr.webhookServer.register(webhookPath('').replace(/\/+$/, ''), () =>
      errored(404, `the sharder serves each ring at ${webhookPath('<ring>')}`),
    );
    const ringOfLease = (o: KubeObject) => {
      const ring = o.metadata?.labels?.[this.labels.ring];
      return ring ? [{ name: ring }] : [];
    };
    const leases = { ...LEASE, labelSelector: this.labels.ring };
    mgr.add(
      new Controller({
        name: 'sharder-membership',
        needLeaderElection: false,
        watches: [RING, { ...leases, enqueue: ringOfLease }],
        reconciler: (req, ctx) => Promise.resolve(this.reconcileMembership(req.name, ctx, mgr)),
      }),
    );
    this.ringController = new Controller({
      name: 'sharder',
      maxConcurrentReconciles: 5,
      watches: [RING],
      reconciler: (req, ctx) => this.reconcileRing(req.name, ctx),
    });
    mgr.add(this.ringController);
    mgr.add(
      new Controller({
        name: 'shardlease',
        watches: [leases],
        reconciler: (req, ctx) => this.reconcileLease(req.namespace!, req.name, ctx),
      }),
    );
  }

  private reconcileMembership(name: string, ctx: ReconcileContext, mgr: Manager): void {
    const ring = ctx.cache.get<ControllerRing>(RING, undefined, name);
    const before = this.membership.get(name)?.available;
    const leases = ctx.cache.list<ShardLease>(LEASE).filter((l) => l.metadata.labels?.[this.labels.ring] === name);
    const view = this.membership.update(name, ring, leases, this.now());
    if (view && !this.registered.has(name)) {
      mgr.webhookServer.register(webhookPath(name), assignmentHandler(name, this.membership, this.labelsOf(name)));
      this.registered.add(name);
    }
    // the shards available changed: the leader rebalances now (a standby's ring controller is not running)
    const after = view?.available;
    if (view && (!before || before.join() !== after!.join())) {
      try {
        this.ringController?.queue.add(name);
      } catch {
        // not started: not the leader
      }
    }
  }

  private async reconcileRing(name: string, ctx: ReconcileContext) {
    const view = this.membership.get(name);
    if (!view) {
      await ctx.pathClient
        .delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${webhookConfigurationName(name)}`)
        .catch((err: unknown) => {
          if (!(err instanceof KubeApiError && err.status === 404)) throw err;
        });
      for (const g of [m.metadataGeneration, m.observedGeneration, m.statusShards, m.statusAvailableShards])
        g.remove(name);
      return;
    }
    await this.writeWebhookConfiguration(name, view.ring, ctx);
    const labels = this.labelsOf(name);
    const started = performance.now();
    const result = await rebalance(name, view, {
      client: ctx.pathClient,
      mapper: this.mgr!.restMapper,
      labels,
      concurrentMoves: this.opts.concurrentMoves ?? 100,
      log: ctx.log,
      signal: ctx.signal,
    });
    if (result.drained || result.moved || result.failed)
      ctx.log.info('rebalanced the ring', {
        controllerring: name,
        drained: result.drained,
        moved: result.moved,
        failed: result.failed,
        waiting: result.waiting,
        ms: Math.round(performance.now() - started),
      });
    await this.writeStatus(name, view.ring, view.shards.length, view.available.length, ctx);
    if (result.failed) throw new Error(`${result.failed} hand-over(s) of ring ${name} failed`);
    // drains asked for, or children waiting for their owner: look again soon rather than at the next sync
    const soon = result.drained > 0 || result.waiting > 0;
    return { requeueAfterMs: soon ? Math.min(this.syncPeriodMs, 2_000) : this.syncPeriodMs };
  }

  private async writeWebhookConfiguration(name: string, ring: ControllerRing, ctx: ReconcileContext): Promise<void> {
    const rules = (ring.spec?.resources ?? []).flatMap((r) =>
      [r, ...(r.controlledResources ?? [])].map((x) => ({
        apiGroups: [x.group ?? ''],
        apiVersions: ['*'],
        resources: [x.resource],
        operations: ['CREATE', 'UPDATE'],
        scope: '*',
      })),
    );
    const hook = this.opts.webhook;
    const path = webhookPath(name);
    const caBundle = hook.caBundle.includes('-----BEGIN')
      ? Buffer.from(hook.caBundle).toString('base64')
      : hook.caBundle;
    const desired = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: {
        name: webhookConfigurationName(name),
        labels: { [this.labels.ring]: name },
        ...(ring.metadata.uid
          ? {
              ownerReferences: [
                { apiVersion: RING.apiVersion, kind: RING.kind, name, uid: ring.metadata.uid, controller: true },
              ],
            }
          : {}),
      },
      webhooks: [
        {
          name: 'sharder.sharding.timebertt.dev',
          admissionReviewVersions: ['v1'],
          clientConfig: {
            ...(hook.service
              ? {
                  service: {
                    namespace: hook.service.namespace,
                    name: hook.service.name,
                    port: hook.service.port ?? 443,
                    path,
                  },
                }
              : { url: `${hook.url!.replace(/\/+$/, '')}${path}` }),
            caBundle,
          },
          rules,
          namespaceSelector: ring.spec?.namespaceSelector ?? DEFAULT_NAMESPACE_SELECTOR,
          objectSelector: { matchExpressions: [{ key: this.labelsOf(name).shard, operator: 'DoesNotExist' }] },
          failurePolicy: 'Ignore',
          sideEffects: 'None',
          timeoutSeconds: 5,
          matchPolicy: 'Equivalent',
          reinvocationPolicy: 'Never',
        },
      ],
    };
    const at = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${desired.metadata.name}`;
    let current: { metadata: { resourceVersion?: string }; webhooks?: unknown } | undefined;
    try {
      current = await ctx.pathClient.get(at);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
    }
    if (!current) {
      await ctx.pathClient.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', desired);
      return;
    }
    if (JSON.stringify(current.webhooks) === JSON.stringify(desired.webhooks)) return;
    await ctx.pathClient.replace(at, {
      ...desired,
      metadata: { ...desired.metadata, resourceVersion: current.metadata.resourceVersion },
    });
  }

  private async writeStatus(
    name: string,
    ring: ControllerRing,
    shards: number,
    available: number,
    ctx: ReconcileContext,
  ): Promise<void> {
    const generation = ring.metadata.generation ?? 0;
    m.metadataGeneration.labels(name).set(generation);
    m.observedGeneration.labels(name).set(generation);
    m.statusShards.labels(name).set(shards);
    m.statusAvailableShards.labels(name).set(available);
    const ready = available > 0;
    const old = ring.status;
    const condition = (old?.conditions ?? []).find((c) => c.type === 'Ready');
    const status = {
      shards,
      availableShards: available,
      observedGeneration: generation,
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'ReconciliationSucceeded' : 'NoAvailableShards',
          message: ready
            ? `${available} of ${shards} shard(s) available; the ring's objects are assigned`
            : 'no shard of the ring is available: new objects stay unassigned',
          observedGeneration: generation,
          lastTransitionTime:
            condition && condition.status === (ready ? 'True' : 'False')
              ? condition.lastTransitionTime
              : new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        },
      ],
    };
    if (JSON.stringify(old) === JSON.stringify(status)) return;
    await ctx.pathClient.mergePatch(`/apis/${RING.apiVersion}/controllerrings/${encodeURIComponent(name)}/status`, {
      status,
    });
  }

  private async reconcileLease(namespace: string, name: string, ctx: ReconcileContext) {
    const lease = ctx.cache.get<ShardLease>(LEASE, namespace, name);
    const ring = lease?.metadata.labels?.[this.labels.ring];
    const key = `${namespace}/${name}`;
    const seen = this.leaseRings.get(key);
    if (seen !== undefined && seen !== ring) {
      // gone, or moved to another ring: its series go with it
      m.shardInfo.remove(namespace, name, seen);
      for (const state of STATES) m.shardState.remove(namespace, name, seen, state);
      this.leaseRings.delete(key);
    }
    if (!lease || !ring) return;
    this.leaseRings.set(key, ring);
    const now = this.now();
    const reading = readLease(lease, now);
    const at = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases/${encodeURIComponent(name)}`;
    m.shardInfo.labels(namespace, name, ring).set(1);
    for (const state of STATES) m.shardState.labels(namespace, name, ring, state).set(state === reading.state ? 1 : 0);
    try {
      if (reading.state === 'orphaned') {
        await ctx.pathClient.delete(at);
        ctx.log.info('deleted the Lease of a shard gone for a minute', { lease: key });
        return;
      }
      if (reading.state === 'uncertain') {
        // written with the resourceVersion read: a shard that renewed meanwhile wins (409, read again)
        const taken = await ctx.pathClient.replace<ShardLease>(at, takenOver(lease, now));
        ctx.log.info('took over the Lease of an unresponsive shard: its objects move', { lease: key });
        const dead = readLease(taken, now);
        await this.setState(at, taken, 'dead', ctx);
        return { requeueAfterMs: (dead.nextChangeMs ?? 0) + AFTER_CHANGE_MS };
      }
      await this.setState(at, lease, reading.state, ctx);
    } catch (err) {
      if (err instanceof KubeApiError && (err.status === 409 || err.status === 404)) return { requeue: true };
      throw err;
    }
    return reading.nextChangeMs === undefined ? undefined : { requeueAfterMs: reading.nextChangeMs + AFTER_CHANGE_MS };
  }

  /** The Lease's state label, for people and dashboards (written only when it changes). */
  private async setState(at: string, lease: ShardLease, state: ShardState, ctx: ReconcileContext): Promise<void> {
    if (lease.metadata.labels?.[this.labels.state] === state) return;
    await ctx.pathClient.mergePatch(at, { metadata: { labels: { [this.labels.state]: state } } });
  }
}
