/**
 * Pods: what the ServiceAccount, DefaultTolerationSeconds and Priority admission plugins add to a new one, and the
 * pod strategy's create — Pending, with the quality of service its resources give it.
 */
import { sameQuantity } from 'ctrlmetrics/internal';
import { isRecord, records, type JsonObject } from '../json.js';
import { admitNewPod } from '../pod-admission.js';
import type { Strategy } from './strategy.js';

/** A resource quantity as JSON holds one (`"500m"`, `2`), else `undefined`. */
const quantity = (v: unknown): string | number | undefined =>
  typeof v === 'string' || typeof v === 'number' ? v : undefined;

/**
 * A pod's quality-of-service class, as kube computes it: BestEffort without any request or limit, Guaranteed when
 * every container limits CPU and memory and requests what it limits, else Burstable.
 */
function qosClassOf(spec: JsonObject): string {
  const containers = [...records(spec.containers), ...records(spec.initContainers)];
  const of = (c: JsonObject, k: 'requests' | 'limits'): JsonObject =>
    isRecord(c.resources) && isRecord(c.resources[k]) ? c.resources[k] : {};
  const compute = (r: JsonObject) => Object.keys(r).filter((k) => k === 'cpu' || k === 'memory');
  if (containers.every((c) => !compute(of(c, 'requests')).length && !compute(of(c, 'limits')).length))
    return 'BestEffort';
  const guaranteed = containers.every((c) => {
    const limits = of(c, 'limits');
    const requests = of(c, 'requests');
    return ['cpu', 'memory'].every((k) => {
      if (limits[k] === undefined) return false;
      if (requests[k] === undefined) return true;
      const [request, limit] = [quantity(requests[k]), quantity(limits[k])];
      return request !== undefined && limit !== undefined && sameQuantity(request, limit);
    });
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export const pods: Strategy = {
  prepare(o, old) {
    if (!old) o.status = { phase: 'Pending', qosClass: qosClassOf(isRecord(o.spec) ? o.spec : {}) };
  },
  admitCreate(o, ctx) {
    admitNewPod(o, {
      serviceAccount: (ns, name) => ctx.store.get('serviceaccounts', ns, name),
      priorityClasses: () => ctx.store.list('priorityclasses.scheduling.k8s.io'),
    });
  },
};
