/**
 * Kubernetes' own kinds for `create api --resource=false`: which `--group` names a built-in API group (kubebuilder's
 * short names — `core`, `apps`, `batch`, `networking`, `rbac.authorization`, … — with their domain `k8s.io` where
 * the group has one, or the full group name), and what the kind is: its resource (plural), scope and
 * subresources from the Kubernetes version's discovery documents (src/kube/builtin-api.ts), never a guessed
 * plural. Its TypeScript type comes from `kubernetes-types`, the same Kubernetes version's API as types only.
 */
import { BUILTIN_API_VERSION, BUILTIN_RESOURCES, type BuiltinResource } from 'ctrlmetrics/internal';
import { ScaffoldError } from './errors.js';

/** The `kubernetes-types` release the scaffolded projects depend on: the API of the authority's Kubernetes version. */
export const KUBERNETES_TYPES_VERSION = `${BUILTIN_API_VERSION.major}.${BUILTIN_API_VERSION.minor}.0`;

/** A built-in kind as `create api` scaffolds a controller for it. */
export interface BuiltinKind {
  /** The API group (`''` for the core group). */
  group: string;
  version: string;
  kind: string;
  /** The resource name (`deployments`). */
  plural: string;
  namespaced: boolean;
  /** The group in RBAC markers: `core` for the core group (controller-gen writes it as `""`), else the API group. */
  rbacGroup: string;
  /** kubebuilder's PROJECT entry for the kind: short group (`core`, `apps`, `networking`), domain (`k8s.io` or none). */
  projectGroup: string;
  projectDomain: string;
  /** The module the kind's TypeScript type comes from (`kubernetes-types/apps/v1.js`), or undefined. */
  typesModule?: string;
  /** `apiVersion` as objects carry it (`v1`, `apps/v1`). */
  apiVersion: string;
  /** Set for a kind of another project's CRD (`create api --external-api-path`) rather than Kubernetes' own. */
  external?: boolean;
}

/** The built-in API groups, each once. */
function builtinGroups(): string[] {
  return [...new Set(BUILTIN_RESOURCES.map((r) => r.group))];
}

/**
 * The built-in API group a `--group` flag names, or undefined: `core` is the core group; a group is named by its
 * full name or, as kubebuilder names them, by the part before `.k8s.io` (`networking`, `rbac.authorization`).
 */
export function builtinGroupOf(flag: string): string | undefined {
  if (flag === 'core') return '';
  return builtinGroups().find((g) => g && (g === flag || g === `${flag}.k8s.io`));
}

/** `kubernetes-types`' folder for a group: the group's first label (`core` for the core group). */
function typesFolder(group: string): string | undefined {
  if (!group) return 'core';
  if (group === 'internal.apiserver.k8s.io') return 'apiserverinternal';
  // kube-aggregator's group is not in kubernetes-types
  if (group === 'apiregistration.k8s.io') return undefined;
  return group.split('.')[0];
}

/**
 * The built-in kind of a `create api` flag set, or a {@link ScaffoldError} listing what exists: the group's
 * versions when the version is unknown, the version's kinds when the kind is. A kind that cannot be listed and
 * watched (a review) cannot have a controller.
 */
export function resolveBuiltinKind(groupFlag: string, version: string, kind: string): BuiltinKind {
  const group = builtinGroupOf(groupFlag);
  if (group === undefined)
    throw new ScaffoldError(`${groupFlag} is not a built-in API group of Kubernetes ${BUILTIN_API_VERSION.gitVersion}`);
  const shown = group || 'core';
  const inGroup = BUILTIN_RESOURCES.filter((r) => r.group === group);
  const versions = [...new Set(inGroup.map((r) => r.version))];
  if (!versions.includes(version)) {
    throw new ScaffoldError(
      `the built-in API group ${shown} has no version ${version} in Kubernetes ${BUILTIN_API_VERSION.gitVersion}; its versions: ${versions.join(', ')}`,
    );
  }
  const kinds = inGroup.filter((r) => r.version === version);
  const r: BuiltinResource | undefined = kinds.find((x) => x.kind === kind);
  if (!r) {
    const names = [...new Set(kinds.map((x) => x.kind))].sort();
    throw new ScaffoldError(
      `${group ? `${group}/` : ''}${version} has no kind ${kind} in Kubernetes ${BUILTIN_API_VERSION.gitVersion}; its kinds: ${names.join(', ')}`,
    );
  }
  if (!r.verbs.includes('list') || !r.verbs.includes('watch')) {
    throw new ScaffoldError(
      `${kind} (${shown}/${version}) answers only ${r.verbs.join(', ')}: a controller needs to list and watch the kind it reconciles`,
    );
  }
  const folder = typesFolder(group);
  const short = group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group || 'core';
  return {
    group,
    version,
    kind,
    plural: r.resource,
    namespaced: r.namespaced,
    rbacGroup: group || 'core',
    projectGroup: short,
    projectDomain: group.endsWith('.k8s.io') ? 'k8s.io' : '',
    ...(folder ? { typesModule: `kubernetes-types/${folder}/${version}.js` } : {}),
    apiVersion: group ? `${group}/${version}` : version,
  };
}
