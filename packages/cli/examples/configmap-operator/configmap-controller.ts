/**
 * The `configmap` controller: for every ConfigMap labelled `ctrlmetrics.dev/managed=true` it keeps a derived
 * ConfigMap `<name>-digest` whose `data.digest` is the SHA-256 of the source's data, owned by the source
 * (ownerReference with `controller: true`, so Kubernetes garbage-collects it with its source).
 *
 * Watches: the managed ConfigMaps themselves, and the derived ones (mapped to their owner), so a deleted or
 * edited digest is repaired at once.
 */
import {
  Controller,
  TerminalError,
  ignoreNotFound,
  isAlreadyExists,
  type ReconcileContext,
  type Request,
  type Result,
} from 'ctrlmetrics';
import { DIGEST_OF_LABEL, MANAGED_LABEL, dataDigest, digestName } from './digest.js';
import { goobers } from './goobers.js';

/** Reconciles one source ConfigMap. */
export async function reconcileConfigMap(req: Request, ctx: ReconcileContext): Promise<Result | void> {
  const ns = req.namespace!;
  const name = digestName(req.name);
  const { signal } = ctx;
  // from the cache: the first read started an informer of the namespace's ConfigMaps (controller-runtime's cache)
  const source = await ctx.client
    .get('v1', 'ConfigMap', { namespace: ns, name: req.name }, { signal })
    .catch(ignoreNotFound);
  const derived = await ctx.client.get('v1', 'ConfigMap', { namespace: ns, name }, { signal }).catch(ignoreNotFound);

  if (!source || source.metadata?.labels?.[MANAGED_LABEL] !== 'true') {
    // gone or no longer managed: remove the digest we made (garbage collection would do it for a deleted source)
    if (derived && derived.metadata?.labels?.[DIGEST_OF_LABEL] === req.name) {
      await ctx.client.delete(derived, { signal }).catch(ignoreNotFound);
      ctx.log.debug('removed digest of an unmanaged ConfigMap', { digest: name });
    }
    return;
  }
  if (name.length > 253) {
    // no retry will make the name shorter
    throw new TerminalError(`ConfigMap ${ns}/${req.name}: the derived name ${name} would exceed 253 characters`);
  }

  const digest = dataDigest(source.data);
  const ownerReferences = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: req.name,
      uid: source.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  if (!derived) {
    try {
      await ctx.client.create(
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: ns, labels: { [DIGEST_OF_LABEL]: req.name }, ownerReferences },
          data: { digest, source: req.name },
        },
        { signal },
      );
    } catch (err) {
      // the cache had not seen the digest we made a moment ago: look again once it has
      if (isAlreadyExists(err)) return { requeueAfterMs: 100 };
      throw err;
    }
    // the exemplar links the count to this reconcile's log lines (OpenMetrics and protobuf scrapes show it)
    goobers.addWithExemplar(1, { reconcile_id: ctx.reconcileID });
    ctx.log.debug('created digest', { digest: name });
    return;
  }
  const upToDate =
    derived.data?.digest === digest &&
    derived.metadata?.labels?.[DIGEST_OF_LABEL] === req.name &&
    derived.metadata?.ownerReferences?.some((r) => r.controller && r.uid === source.metadata?.uid);
  if (upToDate) return;
  // an update carries the resourceVersion we read: a concurrent change gives 409 and the request is retried
  await ctx.client.update(
    {
      ...derived,
      metadata: {
        ...derived.metadata,
        labels: { ...derived.metadata?.labels, [DIGEST_OF_LABEL]: req.name },
        ownerReferences,
      },
      data: { ...derived.data, digest, source: req.name },
    },
    { signal },
  );
  goobers.addWithExemplar(1, { reconcile_id: ctx.reconcileID });
  ctx.log.debug('updated digest', { digest: name });
}

/** The `configmap` controller. */
export function newConfigMapController(
  opts: { namespace?: string; maxConcurrentReconciles?: number } = {},
): Controller {
  return new Controller({
    name: 'configmap',
    maxConcurrentReconciles: opts.maxConcurrentReconciles ?? 2,
    // controller-runtime's ReconciliationTimeout: ctx.signal aborts after 30 s (the API calls below honour it), and
    // controller_runtime_reconcile_timeouts_total counts it
    reconciliationTimeoutMs: 30_000,
    reconciler: reconcileConfigMap,
    watches: [
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: opts.namespace, labelSelector: `${MANAGED_LABEL}=true` },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: opts.namespace,
        labelSelector: DIGEST_OF_LABEL,
        enqueue: { ownerKind: 'ConfigMap', ownerApiVersion: 'v1' },
      },
    ],
  });
}
