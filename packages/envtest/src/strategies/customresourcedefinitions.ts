/**
 * CustomResourceDefinitions: the conversion defaulted at decoding, kube's checks of the definition, names and
 * status as kube's controllers settle them (accepted and established at once), and the served types updated after
 * every write.
 */
import { kubeTime } from 'ctrlmetrics/internal';
import { defaultConversion } from '../crd-conversion.js';
import { validateCRD } from '../object-checks.js';
import { typeKey } from '../resources.js';
import type { KubeObject } from '../types.js';
import type { Strategy } from './strategy.js';

const CRD_KEY = 'customresourcedefinitions.apiextensions.k8s.io';

export const customresourcedefinitions: Strategy = {
  decode: (o) => defaultConversion(o.spec),
  validate: (o) => validateCRD(o),
  prepare(o, old) {
    const names = { ...(o.spec?.names ?? {}) };
    names.singular = names.singular || String(names.kind ?? '').toLowerCase();
    names.listKind = names.listKind || `${String(names.kind)}List`;
    o.spec.names = names;
    o.spec.scope = o.spec.scope ?? 'Namespaced';
    const storage = (o.spec.versions ?? []).find((v: KubeObject) => v.storage)?.name;
    const now = kubeTime();
    o.status = {
      acceptedNames: names,
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'True',
          lastTransitionTime: old?.status?.conditions?.[0]?.lastTransitionTime ?? now,
          reason: 'NoConflicts',
          message: 'no conflicts found',
        },
        {
          type: 'Established',
          status: 'True',
          lastTransitionTime: old?.status?.conditions?.[1]?.lastTransitionTime ?? now,
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
      ],
      storedVersions: [...new Set([...(old?.status?.storedVersions ?? []), ...(storage ? [storage] : [])])],
    };
  },
  // its custom resources go with it
  beforeRemove(old, ctx) {
    const done = new Set<string>();
    for (const rt of ctx.registry.all().filter((x) => x.crd === old.metadata.name)) {
      const k = typeKey(rt);
      if (done.has(k)) continue;
      done.add(k);
      for (const o of ctx.store.list(k)) ctx.store.remove(k, o.metadata.namespace, o.metadata.name);
    }
  },
  afterWrite: (_now, _old, ctx) => ctx.registry.setCRDs(ctx.store.list(CRD_KEY)),
};
