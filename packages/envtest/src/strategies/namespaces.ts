/**
 * Namespaces: the name label and the `kubernetes` finalizer; a new one gets its `default` ServiceAccount and root CA;
 * a delete turns it Terminating (the system's namespaces refuse it) and hands it to the namespace controller.
 */
import { kubeTime } from 'ctrlmetrics/internal';
import { record } from '../json.js';
import { ApiError, conflict } from '../status.js';
import type { Strategy } from './strategy.js';

/** The namespaces kube's NamespaceLifecycle admission refuses to delete. */
const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

export const namespaces: Strategy = {
  deleteAnswersObject: true,
  markForDeletion(old) {
    const name = old.metadata.name;
    if (IMMORTAL.has(name))
      throw new ApiError(403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`, {
        name,
        kind: 'namespaces',
      });
    if (old.metadata.deletionTimestamp) {
      throw conflict(
        'namespaces',
        '',
        name,
        'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.',
      );
    }
    const next = structuredClone(old);
    next.metadata.deletionTimestamp = kubeTime();
    next.status = { ...record(next.status), phase: 'Terminating' };
    return next;
  },
  afterMarked: (stored, ctx) => ctx.purgeNamespace(stored.metadata.name, String(stored.metadata.uid)),
  prepare(o, old) {
    const m = (o.metadata ??= {});
    m.labels = { ...(m.labels ?? {}), 'kubernetes.io/metadata.name': m.name ?? '' };
    o.spec = { finalizers: ['kubernetes'], ...record(o.spec) };
    o.status = { phase: 'Active', ...record(old?.status) };
  },
  // kube's service account and root CA publisher controllers
  afterWrite(now, old, ctx) {
    if (!now || old) return;
    const ns = now.metadata?.name;
    ctx.ensure('serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: ns },
    });
    ctx.ensure('configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'kube-root-ca.crt',
        namespace: ns,
        annotations: {
          'kubernetes.io/description':
            'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
        },
      },
      data: { 'ca.crt': ctx.caPem },
    });
  },
};
