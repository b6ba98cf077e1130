/**
 * The `secret` controller: for every Secret labelled `ctrlmetrics.dev/managed=true` it records the sorted list of
 * its data keys (never the values) in the annotation `ctrlmetrics.dev/keys`. Only updates are watched for
 * changes: the annotation it writes itself produces one more event that ends in a no-op reconcile.
 */
import type { Secret } from 'kubernetes-types/core/v1.js';
import { Controller, KubeApiError, type ReconcileContext, type Request, type Result } from 'ctrlmetrics';
import { KEYS_ANNOTATION, MANAGED_LABEL } from './digest.js';

/** Reconciles one Secret. */
export async function reconcileSecret(req: Request, ctx: ReconcileContext): Promise<Result | void> {
  // read from the watch cache: no API call when nothing changed
  const secret = ctx.cache.get<Secret>('Secret', req.namespace, req.name);
  if (!secret) return; // deleted
  const keys = Object.keys(secret.data ?? {})
    .sort()
    .join(',');
  if (secret.metadata?.annotations?.[KEYS_ANNOTATION] === keys) return;
  try {
    // a merge patch carrying the resourceVersion read: 409 when the Secret changed since
    await ctx.client.patch(
      secret,
      {
        metadata: { annotations: { [KEYS_ANNOTATION]: keys }, resourceVersion: secret.metadata?.resourceVersion },
      },
      { signal: ctx.signal },
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 409) {
      // our cached copy is stale; the watch brings the new one: try again shortly
      return { requeueAfterMs: 500 };
    }
    if (err instanceof KubeApiError && err.status === 404) return;
    throw err;
  }
  ctx.log.debug('annotated secret keys', { keys: keys.split(',').length });
}

/** The `secret` controller. */
export function newSecretController(opts: { namespace?: string } = {}): Controller {
  return new Controller({
    name: 'secret',
    maxConcurrentReconciles: 1,
    reconciler: reconcileSecret,
    watches: [{ apiVersion: 'v1', kind: 'Secret', namespace: opts.namespace, labelSelector: `${MANAGED_LABEL}=true` }],
  });
}
