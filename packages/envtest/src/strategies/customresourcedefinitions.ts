/**
 * CustomResourceDefinitions: the conversion defaulted at decoding, kube's checks of the definition, names and
 * status as kube's controllers settle them (accepted and established at once), and the served types updated after
 * every write.
 */
import { kubeTime } from 'ctrlmetrics/internal';
import { defaultConversion } from '../crd-conversion.js';
import { validateCRD } from '../object-checks.js';
import { typeKey } from '../resources.js';
import { isRecord, list, record, records, str, strings } from '../json.js';
import type { Strategy } from './strategy.js';

const CRD_KEY = 'customresourcedefinitions.apiextensions.k8s.io';

export const customresourcedefinitions: Strategy = {
  deleteAnswersObject: true,
  decode(o) {
    if (isRecord(o.spec)) defaultConversion(o.spec);
  },
  validate: (o) => validateCRD(o),
  prepare(o, old) {
    const spec = record(o.spec) ?? {};
    o.spec = spec;
    const names = { ...record(spec.names) };
    names.singular = str(names.singular) || String(names.kind ?? '').toLowerCase();
    names.listKind = str(names.listKind) || `${String(names.kind)}List`;
    spec.names = names;
    spec.scope = spec.scope ?? 'Namespaced';
    const storage = str(records(spec.versions).find((v) => v.storage)?.name);
    const now = kubeTime();
    const oldStatus = record(old?.status);
    const since = (i: number): unknown => record(list(oldStatus?.conditions)[i])?.lastTransitionTime ?? now;
    o.status = {
      acceptedNames: names,
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'True',
          lastTransitionTime: since(0),
          reason: 'NoConflicts',
          message: 'no conflicts found',
        },
        {
          type: 'Established',
          status: 'True',
          lastTransitionTime: since(1),
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
      ],
      storedVersions: [...new Set([...strings(oldStatus?.storedVersions), ...(storage ? [storage] : [])])],
    };
  },
  // its custom resources go with it
  beforeRemove(old, ctx) {
    const done = new Set<string>();
    for (const rt of ctx.registry.all().filter((x) => x.crd === old.metadata?.name)) {
      const k = typeKey(rt);
      if (done.has(k)) continue;
      done.add(k);
      for (const o of ctx.store.list(k)) ctx.store.remove(k, o.metadata.namespace, o.metadata.name);
    }
  },
  afterWrite: (_now, _old, ctx) => ctx.registry.setCRDs(ctx.store.list(CRD_KEY)),
};
