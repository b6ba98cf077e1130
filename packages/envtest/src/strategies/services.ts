/** Services: a cluster IP from the authority's pool, and the spec defaults kube's strategy and defaulting fill in. */
import { record, records, str } from '../json.js';
import type { Strategy } from './strategy.js';

export const services: Strategy = {
  prepare(o, old, ctx) {
    const spec = record(o.spec) ?? {};
    o.spec = spec;
    spec.type = spec.type ?? 'ClusterIP';
    if (spec.type !== 'ExternalName') {
      if (!spec.clusterIP) spec.clusterIP = str(record(old?.spec)?.clusterIP) ?? ctx.allocateIP();
      if (spec.clusterIP !== 'None') spec.clusterIPs = spec.clusterIPs ?? [spec.clusterIP];
      spec.ipFamilies = spec.ipFamilies ?? ['IPv4'];
      spec.ipFamilyPolicy = spec.ipFamilyPolicy ?? 'SingleStack';
      spec.internalTrafficPolicy = spec.internalTrafficPolicy ?? 'Cluster';
    }
    spec.sessionAffinity = spec.sessionAffinity ?? 'None';
    for (const p of records(spec.ports)) {
      p.protocol = p.protocol ?? 'TCP';
      if (p.targetPort === undefined) p.targetPort = p.port;
    }
    o.status = o.status ?? old?.status ?? { loadBalancer: {} };
  },
};
