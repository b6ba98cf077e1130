/** Namespaces: the name label and the `kubernetes` finalizer; a new one gets its `default` ServiceAccount and root CA. */
import { record } from '../json.js';
import type { Strategy } from './strategy.js';

export const namespaces: Strategy = {
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
