/**
 * The Memcached controller of kubebuilder's tutorial in TypeScript: it keeps a Deployment of `spec.size` memcached
 * pods for each Memcached, reports `Available`/`Degraded` conditions, records events, and cleans up through a
 * finalizer before the Memcached goes.
 */
import {
  Controller,
  Manager,
  addFinalizer,
  containsFinalizer,
  createOrUpdate,
  ignoreNotFound,
  isBeingDeleted,
  predicates,
  removeFinalizer,
  setControllerReference,
  setStatusCondition,
  type NewCondition,
  type ReconcileContext,
  type Request,
  type Result,
} from 'ctrlmetrics';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { MEMCACHED, type Memcached } from './api.js';

export const FINALIZER = 'cache.example.com/finalizer';
/** The field the manager indexes Deployments by: the name of the Memcached that controls them. */
export const OWNER_FIELD = '.metadata.controller';
const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;

/** Adds the controller to a manager, with the index of Deployments by their controlling Memcached it reads. */
export function setupMemcachedController(mgr: Manager): void {
  mgr.indexField<Deployment>(DEPLOYMENT, OWNER_FIELD, (d) => {
    const ref = d.metadata?.ownerReferences?.find((r) => r.controller);
    return ref?.kind === MEMCACHED.kind && ref.apiVersion === MEMCACHED.apiVersion ? ref.name : undefined;
  });
  mgr.add(newMemcachedController());
}

/** The controller (add it with {@link setupMemcachedController}, which makes the index it reads). */
export function newMemcachedController(): Controller {
  return new Controller({
    name: 'memcached',
    watches: [
      // spec changes (and the deletion mark, which bumps the generation), not our own status writes
      { ...MEMCACHED, predicate: predicates.generationChanged },
      // a change to an owned Deployment reconciles its Memcached
      { ...DEPLOYMENT, enqueue: { ownerKind: 'Memcached', ownerApiVersion: MEMCACHED.apiVersion } },
    ],
    reconciler: reconcile,
  });
}

// What the controller reads and writes; `ctrlmetrics generate rbac` writes config/rbac/role.yaml from these markers.
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete

async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
  let m = await ctx.client.get<Memcached>(MEMCACHED, req).catch(ignoreNotFound);
  if (!m) return; // deleted: its Deployment goes with it (garbage collection of owned objects)

  if (isBeingDeleted(m)) {
    if (!containsFinalizer(m, FINALIZER)) return;
    m = await setCondition(ctx, m, {
      type: 'Degraded',
      status: 'Unknown',
      reason: 'Finalizing',
      message: `Performing finalizer operations for ${m.metadata.name}`,
    });
    // the clean-up a real operator does before its resource goes (backups, external resources, …)
    ctx.recorder.event(
      m,
      'Warning',
      'Deleting',
      `Custom Resource ${m.metadata.name} is being deleted from the namespace ${m.metadata.namespace}`,
    );
    m = await setCondition(ctx, m, {
      type: 'Degraded',
      status: 'True',
      reason: 'Finalizing',
      message: `Finalizer operations for ${m.metadata.name} were successfully accomplished`,
    });
    removeFinalizer(m, FINALIZER);
    await ctx.client.update(m); // the last finalizer gone, the API server deletes the Memcached
    return;
  }

  if (!m.status?.conditions?.length) {
    m = await setCondition(ctx, m, {
      type: 'Available',
      status: 'Unknown',
      reason: 'Reconciling',
      message: 'Starting reconciliation',
    });
  }
  if (addFinalizer(m, FINALIZER)) m = await ctx.client.update(m);

  const owner = m;
  const size = m.spec.size ?? 1;
  const { operation } = await createOrUpdate(ctx.client, deploymentFor(m), (d) => {
    setControllerReference(owner, d);
    // the pod template is written once; afterwards only the size is kept (the API server defaults the template)
    d.spec ??= { selector: { matchLabels: labels(owner) }, template: podTemplate(owner) };
    d.spec.replicas = size;
  });
  if (operation === 'created')
    ctx.recorder.event(m, 'Normal', 'Created', `Created Deployment ${m.metadata.name} with ${size} replicas`);
  // any other Deployment this Memcached controls (left by an earlier naming, or made by hand) goes: found through
  // the index of Deployments by their controller, in O(matches) rather than a scan of every cached Deployment
  const owned = ctx.cache.list<Deployment>('Deployment', {
    matchingFields: { [OWNER_FIELD]: owner.metadata.name ?? '' },
    namespace: owner.metadata.namespace,
  });
  for (const stray of owned.filter((d) => d.metadata?.name !== owner.metadata.name)) {
    await ctx.client.delete(stray).catch(ignoreNotFound);
    ctx.recorder.event(
      m,
      'Normal',
      'Deleted',
      `Deleted Deployment ${stray.metadata?.name ?? ''}: ${m.metadata.name} keeps one, named after it`,
    );
  }
  await setCondition(ctx, m, {
    type: 'Available',
    status: 'True',
    reason: 'Reconciling',
    message: `Deployment for custom resource (${m.metadata.name}) with ${size} replicas created successfully`,
  });
}

/** Sets a condition and writes the status when it changed; answers the object as stored. */
async function setCondition(
  ctx: ReconcileContext,
  m: Memcached,
  c: Omit<NewCondition, 'observedGeneration'>,
): Promise<Memcached> {
  const conditions = [...(m.status?.conditions ?? [])].map((x) => ({ ...x }));
  if (!setStatusCondition(conditions, { ...c, observedGeneration: m.metadata.generation })) return m;
  return ctx.client.status().update({ ...m, status: { ...m.status, conditions } });
}

function labels(m: Memcached): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'memcached',
    'app.kubernetes.io/instance': m.metadata.name ?? '',
    'app.kubernetes.io/managed-by': 'memcached-operator',
  };
}

function deploymentFor(m: Memcached): Deployment {
  return { ...DEPLOYMENT, metadata: { name: m.metadata.name, namespace: m.metadata.namespace } };
}

function podTemplate(m: Memcached): PodTemplateSpec {
  return {
    metadata: { labels: labels(m) },
    spec: {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'memcached',
          image: m.spec.image,
          imagePullPolicy: 'IfNotPresent',
          command: ['memcached', '--memory-limit=64', '-o', 'modern', '-v'],
          ports: [{ containerPort: 11211, name: 'memcached' }],
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1001,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
    },
  };
}
