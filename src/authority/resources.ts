/**
 * The resource types the authority serves: built-in kinds plus the custom resources of established CRDs.
 */
import type { StructuralSchema } from './crd-schema.js';
import { deprecationWarningOf } from './crd-conversion.js';

/** A Kubernetes object as plain JSON. */
export type KubeObject = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** How object names of a type are validated. */
export type NameRule = 'subdomain' | 'label' | 'label1035' | 'path';

/** A CRD's `subresources.scale`: simple JSON paths such as `.spec.replicas`. */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** One served resource (group/version/resource) and what it supports. */
export interface ResourceType {
  group: string;
  version: string;
  /** Plural resource name, e.g. `configmaps`. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs: string[];
  /** Virtual "review" resources: create only, nothing stored. */
  virtual?: boolean;
  nameRule: NameRule;
  /** `metadata.generation` is maintained (bumped on spec changes). */
  generation?: boolean;
  /** Has a `status` subresource: updates of the main resource keep the stored status. */
  statusSubresource?: boolean;
  /** For custom resources: the CRD's additional printer columns. */
  printerColumns?: Array<{ name: string; type: string; jsonPath: string; description?: string; priority?: number; format?: string }>;
  /** Set for custom resources. */
  crd?: string;
  /** For custom resources with a scale subresource: where the replicas and the selector are. */
  scale?: ScalePaths;
  /** For custom resources: the version's structural schema (`schema.openAPIV3Schema`). */
  schema?: StructuralSchema;
  /** For a deprecated custom resource version: the warning every request to it gets. */
  deprecationWarning?: string;
}

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function builtin(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<ResourceType> = {},
): ResourceType {
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    verbs: CRUD,
    nameRule: 'subdomain',
    ...extra,
  };
}

/** The built-in kinds. */
export const BUILTIN_TYPES: readonly ResourceType[] = [
  builtin('', 'v1', 'namespaces', 'Namespace', false, { shortNames: ['ns'], nameRule: 'label', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }),
  builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', true, { shortNames: ['sa'] }),
  builtin('', 'v1', 'services', 'Service', true, { shortNames: ['svc'], categories: ['all'], nameRule: 'label1035', statusSubresource: true }),
  builtin('', 'v1', 'configmaps', 'ConfigMap', true, { shortNames: ['cm'] }),
  // stored only (nothing runs them): what a kubelet would report is written through pods/status, e.g. by tests of doctor
  builtin('', 'v1', 'pods', 'Pod', true, { shortNames: ['po'], categories: ['all'], statusSubresource: true }),
  builtin('', 'v1', 'secrets', 'Secret', true),
  builtin('', 'v1', 'events', 'Event', true, { shortNames: ['ev'] }),
  // stored only, as pods: what the EndpointSlice controller would write is written by tests of doctor
  builtin('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  builtin('apps', 'v1', 'deployments', 'Deployment', true, { shortNames: ['deploy'], categories: ['all'], generation: true, statusSubresource: true }),
  builtin('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, { nameRule: 'path' }),
  builtin('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, { nameRule: 'path' }),
  builtin('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, { nameRule: 'path' }),
  builtin('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, { nameRule: 'path' }),
  builtin('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, { shortNames: ['netpol'], generation: true }),
  builtin('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  // stored, defaulted and validated; the authority does not call them yet
  builtin('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, { categories: ['api-extensions'], generation: true }),
  builtin('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, { categories: ['api-extensions'], generation: true }),
  builtin('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, {
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    generation: true,
    statusSubresource: true,
  }),
  builtin('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', false, { virtual: true, verbs: ['create'] }),
  builtin('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', false, { virtual: true, verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false, { virtual: true, verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, { virtual: true, verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, { virtual: true, verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, { virtual: true, verbs: ['create'] }),
];

/** Subresources listed in discovery (besides `status`). */
export const SUBRESOURCES: ReadonlyArray<{ parent: string; group: string; version: string; name: string; kind: string; kindGroup: string; verbs: string[] }> = [
  { parent: 'serviceaccounts', group: '', version: 'v1', name: 'token', kind: 'TokenRequest', kindGroup: 'authentication.k8s.io', verbs: ['create'] },
  { parent: 'deployments', group: 'apps', version: 'v1', name: 'scale', kind: 'Scale', kindGroup: 'autoscaling', verbs: ['get', 'patch', 'update'] },
];

/** Storage key of a type: objects are stored once per group/resource, whatever version they are read in. */
export function typeKey(t: { group: string; resource: string }): string {
  return t.group ? `${t.resource}.${t.group}` : t.resource;
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

  /** Group → versions, in a stable order (built-in groups first). */
  groups(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const t of this.all()) {
      const vs = m.get(t.group) ?? [];
      if (!vs.includes(t.version)) vs.push(t.version);
      m.set(t.group, vs);
    }
    return m;
  }
}

/** The custom resource types an established CRD serves. */
export function typesOfCRD(crd: KubeObject): ResourceType[] {
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  if (!spec.group || !names.plural || !names.kind) return [];
  return (spec.versions ?? [])
    .filter((v: KubeObject) => v.served !== false)
    .map((v: KubeObject): ResourceType => ({
      group: spec.group,
      version: v.name,
      resource: names.plural,
      singular: names.singular || String(names.kind).toLowerCase(),
      kind: names.kind,
      listKind: names.listKind || `${names.kind}List`,
      namespaced: spec.scope !== 'Cluster',
      shortNames: names.shortNames,
      categories: names.categories,
      verbs: CRUD,
      nameRule: 'subdomain',
      generation: true,
      statusSubresource: !!v.subresources?.status,
      printerColumns: v.additionalPrinterColumns,
      crd: crd.metadata?.name,
      ...(v.deprecated ? { deprecationWarning: deprecationWarningOf(crd, v.name) } : {}),
      ...(v.schema?.openAPIV3Schema && typeof v.schema.openAPIV3Schema === 'object' ? { schema: v.schema.openAPIV3Schema as StructuralSchema } : {}),
      ...(typeof v.subresources?.scale?.specReplicasPath === 'string' && typeof v.subresources.scale.statusReplicasPath === 'string'
        ? {
            scale: {
              specReplicasPath: v.subresources.scale.specReplicasPath,
              statusReplicasPath: v.subresources.scale.statusReplicasPath,
              ...(typeof v.subresources.scale.labelSelectorPath === 'string' ? { labelSelectorPath: v.subresources.scale.labelSelectorPath } : {}),
            },
          }
        : {}),
    }));
}
