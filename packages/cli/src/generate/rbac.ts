/**
 * The manager's Role and ClusterRole from `+kubebuilder:rbac` markers, normalised as controller-gen's `rbac`
 * generator does: one rule per resource, verbs merged for equal targets, then rules merged that differ only in
 * resources, then groups, then URLs; values de-duplicated and sorted; rules sorted by their key; `*` collapses the
 * verbs. Without a namespace the rules form a ClusterRole, with one a Role in that namespace.
 */
import type { Marker } from './markers.js';

interface Rule {
  groups: string[];
  resources: string[];
  resourceNames: string[];
  urls: string[];
  verbs: string[];
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
const keyOf = (r: Rule, without: keyof Rule) =>
  JSON.stringify(
    (['groups', 'resources', 'resourceNames', 'urls', 'verbs'] as const)
      .filter((k) => k !== without)
      .map((k) => sorted(r[k])),
  );

/** Merges rules equal in everything but `field`, taking the union of `field`. */
function mergeBy(rules: Rule[], field: keyof Rule): Rule[] {
  const out = new Map<string, Rule>();
  for (const r of rules) {
    const k = keyOf(r, field);
    const have = out.get(k);
    if (have) have[field] = sorted([...have[field], ...r[field]]);
    else out.set(k, { ...r, [field]: sorted(r[field]) });
  }
  return [...out.values()];
}

function normalise(markers: Marker[]): Rule[] {
  const split: Rule[] = [];
  for (const m of markers) {
    const a = m.value as Record<string, unknown>;
    const list = (k: string) =>
      ((a[k] as string[] | undefined) ?? []).map((x) => (k === 'groups' && x === 'core' ? '' : x));
    const base = {
      groups: list('groups'),
      resourceNames: list('resourceNames'),
      urls: list('urls'),
      verbs: list('verbs'),
    };
    const resources = list('resources');
    if (resources.length === 0) split.push({ ...base, resources: [] });
    for (const r of resources) split.push({ ...base, resources: [r] });
  }
  let rules = mergeBy(split, 'verbs');
  rules = mergeBy(rules, 'resources');
  rules = mergeBy(rules, 'groups');
  rules = mergeBy(rules, 'urls');
  for (const r of rules) {
    r.groups = sorted(r.groups);
    r.resourceNames = sorted(r.resourceNames);
    r.urls = sorted(r.urls);
    r.verbs = r.verbs.includes('*') ? ['*'] : sorted(r.verbs);
  }
  const sortKey = (r: Rule) =>
    `${r.groups.join('&')} + ${r.resources.join('&')} + ${r.resourceNames.join('&')} + ${r.urls.join('&')}`;
  return rules.sort((x, y) => (sortKey(x) < sortKey(y) ? -1 : sortKey(x) > sortKey(y) ? 1 : 0));
}

/** The roles of the markers (a ClusterRole first, then Roles by namespace); none without markers. */
export function generateRoles(markers: Marker[], roleName = 'manager-role'): Array<Record<string, unknown>> {
  const groups = new Map<string, Marker[]>();
  for (const m of markers) {
    const a = m.value as Record<string, unknown>;
    const key = JSON.stringify([String(a.namespace ?? ''), String(a.roleName ?? roleName)]);
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.keys()].sort().map((key) => {
    const [namespace, name] = JSON.parse(key) as [string, string];
    const rules = normalise(groups.get(key)!).map((r) => ({
      ...(r.resources.length || !r.urls.length ? { apiGroups: r.groups } : {}),
      ...(r.urls.length ? { nonResourceURLs: r.urls } : {}),
      ...(r.resourceNames.length ? { resourceNames: r.resourceNames } : {}),
      ...(r.resources.length ? { resources: r.resources } : {}),
      verbs: r.verbs,
    }));
    return namespace
      ? { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules }
      : { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules };
  });
}
