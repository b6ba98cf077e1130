/**
 * The resource types the authority serves: built-in kinds plus the custom resources of established CRDs.
 */
import { deprecationWarningOf } from './crd-conversion.js';
import { BUILTIN_GROUPS, BUILTIN_RESOURCES, type BuiltinResource } from 'ctrlmetrics/internal';
import type { BuiltinView, KubeObject, NameRule, ResourceType } from './types.js';
import { record, records, str, strings, type JsonObject } from './json.js';
import { coreFromEventsV1, eventsV1FromCore } from './event-views.js';
import { hpaV1FromV2, hpaV2FromV1 } from './hpa-views.js';

/** A custom resource's verbs, in the order kube-apiserver lists them. */
const CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

const gvr = (group: string, version: string, resource: string) => `${group ? `${group}/` : ''}${version}/${resource}`;

/**
 * Built-in resources of the Kubernetes version the authority stands for that it does not serve, and why: each
 * needs a part of a cluster the authority does not run. Discovery leaves
 * them out, so clients see they are missing rather than meet a half answer.
 */
export const NOT_SERVED_RESOURCES: ReadonlyMap<string, string> = new Map([
  ['v1/bindings', 'binds a pod to a node: no scheduler or kubelet runs beside the authority'],
  [
    'v1/componentstatuses',
    'reports the health of control-plane components (etcd, scheduler, controller-manager) the authority does not have',
  ],
]);

/**
 * Subresources the authority does not serve: they reach a kubelet (`log`, `exec`, `attach`, `portforward`), proxy
 * to a node, pod or service (`proxy`), or stand for a controller's work (`binding`, `eviction`,
 * `ephemeralcontainers`, a namespace's `finalize`, a CSR's `approval`).
 */
export const NOT_SERVED_SUBRESOURCES: ReadonlySet<string> = new Set([
  'attach',
  'binding',
  'ephemeralcontainers',
  'eviction',
  'exec',
  'finalize',
  'log',
  'portforward',
  'proxy',
  'approval',
]);

/**
 * Resources the authority serves beyond its Kubernetes version's: `SelfSubjectReview` (authentication.k8s.io/v1
 * from Kubernetes 1.28), which `kubectl auth whoami` asks.
 */
const LATER_RESOURCES: ResourceType[] = [
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    kind: 'SelfSubjectReview',
    listKind: 'SelfSubjectReviewList',
    namespaced: false,
    verbs: ['create'],
    virtual: true,
    nameRule: 'subdomain',
  },
];

/** Create-only reviews: answered, never stored. */
const REVIEWS = new Set([
  'tokenreviews',
  'subjectaccessreviews',
  'selfsubjectaccessreviews',
  'selfsubjectrulesreviews',
  'localsubjectaccessreviews',
]);

/**
 * Kinds whose `metadata.generation` kube-apiserver maintains (their strategies set it on create and bump it on a
 * spec change).
 */
const WITH_GENERATION = new Set([
  'apps/deployments',
  'apps/replicasets',
  'apps/statefulsets',
  'apps/daemonsets',
  '/replicationcontrollers',
  'batch/jobs',
  'batch/cronjobs',
  'autoscaling/horizontalpodautoscalers',
  'policy/poddisruptionbudgets',
  'networking.k8s.io/ingresses',
  'networking.k8s.io/ingressclasses',
  'networking.k8s.io/networkpolicies',
  'flowcontrol.apiserver.k8s.io/flowschemas',
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
  'apiextensions.k8s.io/customresourcedefinitions',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
]);

/** How each kind's names are validated where it is not a DNS subdomain (kube's `ValidateNameFunc` of the kind). */
function nameRuleOf(group: string, resource: string): NameRule {
  if (group === 'rbac.authorization.k8s.io') return 'path';
  if (!group && resource === 'namespaces') return 'label';
  if (!group && resource === 'services') return 'label1035';
  return 'subdomain';
}

function typeOf(r: BuiltinResource): ResourceType {
  const subs = (r.subresources ?? []).filter((s) => !NOT_SERVED_SUBRESOURCES.has(s.name));
  const groupResource = `${r.group}/${r.resource}`;
  return {
    group: r.group,
    version: r.version,
    resource: r.resource,
    singular: r.kind.toLowerCase(),
    kind: r.kind,
    listKind: `${r.kind}List`,
    namespaced: r.namespaced,
    verbs: r.verbs,
    nameRule: nameRuleOf(r.group, r.resource),
    ...(r.shortNames ? { shortNames: r.shortNames } : {}),
    ...(r.categories ? { categories: r.categories } : {}),
    ...(r.storageVersionHash ? { storageVersionHash: r.storageVersionHash } : {}),
    ...(REVIEWS.has(r.resource) ? { virtual: true } : {}),
    ...(WITH_GENERATION.has(groupResource) ? { generation: true } : {}),
    ...(subs.some((s) => s.name === 'status') ? { statusSubresource: true } : {}),
    ...(subs.some((s) => s.name === 'scale') ? { builtinScale: true } : {}),
    ...(subs.length ? { subresources: subs } : {}),
    ...(r.group === 'events.k8s.io' && r.resource === 'events'
      ? {
          view: {
            storage: { group: '', version: 'v1', resource: 'events' },
            read: eventsV1FromCore,
            write: coreFromEventsV1,
          },
        }
      : {}),
    ...(r.group === 'autoscaling' && r.version === 'v1' && r.resource === 'horizontalpodautoscalers'
      ? {
          view: {
            storage: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' },
            read: hpaV1FromV2,
            write: hpaV2FromV1,
          },
        }
      : {}),
  };
}

/** The built-in kinds the authority serves: its Kubernetes version's, but those {@link NOT_SERVED_RESOURCES} names. */
export const BUILTIN_TYPES: readonly ResourceType[] = [
  ...BUILTIN_RESOURCES.filter((r) => !NOT_SERVED_RESOURCES.has(gvr(r.group, r.version, r.resource))).map(typeOf),
  ...LATER_RESOURCES,
];

/** Storage key of a type: objects are stored once per group/resource, whatever version they are read in. */
export function typeKey(t: { group: string; resource: string; view?: BuiltinView }): string {
  const s = t.view?.storage ?? t;
  return s.group ? `${s.resource}.${s.group}` : s.resource;
}

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** Built-in types plus custom resource types derived from established CRDs. */
export class ResourceRegistry {
  private custom: ResourceType[] = [];
  private byGVR = new Map<string, ResourceType>();

  constructor() {
    this.rebuild();
  }

  /** All served types. */
  all(): ResourceType[] {
    return [...BUILTIN_TYPES, ...this.custom];
  }

  /** Replaces the custom types by those of the given CRD objects. */
  setCRDs(crds: KubeObject[]): void {
    this.custom = crds.flatMap((crd) => typesOfCRD(crd));
    this.rebuild();
  }

  private rebuild(): void {
    this.byGVR.clear();
    for (const t of this.all()) this.byGVR.set(`${t.group}/${t.version}/${t.resource}`, t);
  }

  get(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byGVR.get(`${group}/${version}/${resource}`);
  }

  /** The type for an object's apiVersion and kind. */
  forKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    return this.all().find((t) => t.group === group && t.version === version && t.kind === kind);
  }

  /**
   * Group → versions, in discovery's order: the built-in groups as kube-apiserver lists them (each one's versions
   * preferred first), then those of CRDs.
   */
  groups(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    const served = this.all();
    m.set('', ['v1']);
    for (const g of BUILTIN_GROUPS) {
      const vs = g.versions.filter((v) => served.some((t) => t.group === g.name && t.version === v));
      if (vs.length) m.set(g.name, vs);
    }
    for (const t of served) {
      const vs = m.get(t.group) ?? [];
      if (!vs.includes(t.version)) vs.push(t.version);
      m.set(t.group, vs);
    }
    return m;
  }
}

type PrinterColumn = NonNullable<ResourceType['printerColumns']>[number];

/** A CRD version's printer column as the table needs it (name, type and JSONPath strings), else `undefined`. */
function printerColumn(c: JsonObject): PrinterColumn | undefined {
  const [name, type, jsonPath] = [str(c.name), str(c.type), str(c.jsonPath)];
  if (name === undefined || type === undefined || jsonPath === undefined) return undefined;
  return {
    name,
    type,
    jsonPath,
    ...(typeof c.description === 'string' ? { description: c.description } : {}),
    ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
    ...(typeof c.format === 'string' ? { format: c.format } : {}),
  };
}

/** The custom resource types an established CRD serves. */
export function typesOfCRD(crd: KubeObject): ResourceType[] {
  const spec = record(crd.spec) ?? {};
  const names = record(spec.names) ?? {};
  const [group, plural, kind] = [str(spec.group), str(names.plural), str(names.kind)];
  if (!group || !plural || !kind) return [];
  return records(spec.versions)
    .filter((v) => v.served !== false)
    .map((v): ResourceType => {
      const version = String(v.name);
      const subresources = record(v.subresources);
      const scale = record(subresources?.scale);
      const schema = record(record(v.schema)?.openAPIV3Schema);
      return {
        group,
        version,
        resource: plural,
        singular: str(names.singular) || kind.toLowerCase(),
        kind,
        listKind: str(names.listKind) || `${kind}List`,
        namespaced: spec.scope !== 'Cluster',
        shortNames: Array.isArray(names.shortNames) ? strings(names.shortNames) : undefined,
        categories: Array.isArray(names.categories) ? strings(names.categories) : undefined,
        verbs: CR_VERBS,
        nameRule: 'subdomain',
        generation: true,
        statusSubresource: !!subresources?.status,
        printerColumns: Array.isArray(v.additionalPrinterColumns)
          ? records(v.additionalPrinterColumns).flatMap((c) => printerColumn(c) ?? [])
          : undefined,
        crd: crd.metadata?.name,
        ...(v.deprecated ? { deprecationWarning: deprecationWarningOf(crd, version) } : {}),
        // the CRD's validation made it a structural schema before it was stored
        ...(schema ? { schema } : {}),
        ...(typeof scale?.specReplicasPath === 'string' && typeof scale.statusReplicasPath === 'string'
          ? {
              scale: {
                specReplicasPath: scale.specReplicasPath,
                statusReplicasPath: scale.statusReplicasPath,
                ...(typeof scale.labelSelectorPath === 'string' ? { labelSelectorPath: scale.labelSelectorPath } : {}),
              },
            }
          : {}),
      };
    });
}
