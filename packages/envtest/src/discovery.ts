/**
 * Discovery documents (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/<g>/<v>`) for the served types.
 */
import type { ResourceRegistry } from './resources.js';
import type { KubeObject, ResourceType } from './types.js';

/** The Kubernetes version the authority reports (matches the kubectl on the machine, so no skew warning). */
export const KUBE_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-ctrlmetrics' };

export function versionInfo(): KubeObject {
  return {
    ...KUBE_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.23.0',
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

export function coreVersions(serverAddress: string): KubeObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(name: string, versions: string[]): KubeObject {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(registry: ResourceRegistry): KubeObject {
  const groups = [...registry.groups()].filter(([g]) => g !== '').map(([g, vs]) => groupEntry(g, vs));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroup(registry: ResourceRegistry, group: string): KubeObject | undefined {
  const vs = registry.groups().get(group);
  if (!vs || !group) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, vs) };
}

/** The APIResourceList of a group version, or undefined when it is not served. */
export function apiResourceList(registry: ResourceRegistry, group: string, version: string): KubeObject | undefined {
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  if (!types.length) return undefined;
  const resources: KubeObject[] = [];
  // built-in resources by name, as kube-apiserver sorts them; custom ones in the order their CRDs came
  const builtins = types
    .filter((t) => !t.crd)
    .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  for (const t of builtins) resources.push(...builtinEntries(t));
  for (const t of types.filter((x) => x.crd)) resources.push(...customEntries(t));
  // the core group's list has no apiVersion, as kube-apiserver answers it
  return {
    kind: 'APIResourceList',
    ...(group ? { apiVersion: 'v1' } : {}),
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

/** A built-in kind's entries, as kube-apiserver lists them: no singular name, subresources by name after it. */
function builtinEntries(t: ResourceType): KubeObject[] {
  const r: KubeObject = { name: t.resource, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: t.verbs };
  if (t.shortNames?.length) r.shortNames = t.shortNames;
  if (t.categories?.length) r.categories = t.categories;
  if (t.storageVersionHash) r.storageVersionHash = t.storageVersionHash;
  const subs = [...(t.subresources ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1));
  return [
    r,
    ...subs.map((s) => ({
      name: `${t.resource}/${s.name}`,
      singularName: '',
      namespaced: t.namespaced,
      ...(s.group !== undefined ? { group: s.group } : {}),
      ...(s.version !== undefined ? { version: s.version } : {}),
      kind: s.kind ?? t.kind,
      verbs: s.verbs,
    })),
  ];
}

/** A custom resource's entries: the resource, then its `status` and `scale` subresources where its CRD has them. */
function customEntries(t: ResourceType): KubeObject[] {
  const r: KubeObject = {
    name: t.resource,
    singularName: t.singular,
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: t.verbs,
  };
  if (t.shortNames?.length) r.shortNames = t.shortNames;
  if (t.categories?.length) r.categories = t.categories;
  const out = [r];
  if (t.statusSubresource)
    out.push({
      name: `${t.resource}/status`,
      singularName: '',
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: ['get', 'patch', 'update'],
    });
  if (t.scale)
    out.push({
      name: `${t.resource}/scale`,
      singularName: '',
      namespaced: t.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  return out;
}
