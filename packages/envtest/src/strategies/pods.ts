/** Pods: what the ServiceAccount, DefaultTolerationSeconds and Priority admission plugins add to a new one. */
import { admitNewPod } from '../pod-admission.js';
import type { Strategy } from './strategy.js';

export const pods: Strategy = {
  admitCreate(o, ctx) {
    admitNewPod(o, {
      serviceAccount: (ns, name) => ctx.store.get('serviceaccounts', ns, name),
      priorityClasses: () => ctx.store.list('priorityclasses.scheduling.k8s.io'),
    });
  },
};
