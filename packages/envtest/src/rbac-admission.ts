/**
 * What kube-apiserver checks when RBAC objects are written:
 * - validation of Roles, ClusterRoles and their bindings (rules, roleRef, subjects), answered with 422 Invalid;
 * - privilege-escalation prevention: a user may create or update a (Cluster)Role only with rules they already hold
 *   (or with the `escalate` verb on it), and a (Cluster)RoleBinding only to a role whose rules they already hold
 *   (or with the `bind` verb on it); `system:masters` is exempt; setting an `aggregationRule` needs full authority.
 *   Denials are 403 Forbidden.
 * The coverage rules follow the Kubernetes documentation on privilege escalation prevention: each rule is broken
 * down into single verb/group/resource/name (or verb/URL) rules, and each of those must be covered by one rule the
 * user holds, where `*` covers everything, `*\/sub` covers that subresource of any resource, and a URL ending in `*`
 * covers the URLs starting with the part before it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldCause } from './status.js';
import { ApiError, notFound } from './status.js';
import type { KubeObject } from './types.js';
import { record, records, type JsonObject } from './json.js';
import {
  resolveAggregatedRules,
  SYSTEM_MASTERS,
  type PolicyRule,
  type RbacObjects,
  type UserInfo,
  type AuthzAttributes,
  type AuthzDecision,
} from './rbac.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const ROLE_KINDS = new Set(['roles', 'clusterroles']);
const BINDING_KINDS = new Set(['rolebindings', 'clusterrolebindings']);

/** True for the four RBAC resources. */
export function isRbacResource(group: string, resource: string): boolean {
  return group === RBAC_GROUP && (ROLE_KINDS.has(resource) || BINDING_KINDS.has(resource));
}

const arr = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);

/** Field problems of a Role/ClusterRole/RoleBinding/ClusterRoleBinding (empty when valid). */
export function validateRbacObject(resource: string, o: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  if (ROLE_KINDS.has(resource)) {
    const namespaced = resource === 'roles';
    const rules = o.rules;
    if (rules != null && !Array.isArray(rules))
      causes.push({ field: 'rules', message: 'Invalid value: must be a list of rules' });
    (arr(rules) ?? []).forEach((r, i) => causes.push(...validateRule(r, `rules[${i}]`, namespaced)));
  } else if (BINDING_KINDS.has(resource)) {
    const namespaced = resource === 'rolebindings';
    const ref = record(o.roleRef) ?? {};
    if (ref.apiGroup !== RBAC_GROUP) {
      causes.push({
        field: 'roleRef.apiGroup',
        message: `Unsupported value: ${JSON.stringify(ref.apiGroup ?? '')}: supported values: "${RBAC_GROUP}"`,
        reason: 'FieldValueNotSupported',
      });
    }
    const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
    if (typeof ref.kind !== 'string' || !kinds.includes(ref.kind)) {
      causes.push({
        field: 'roleRef.kind',
        message: `Unsupported value: ${JSON.stringify(ref.kind ?? '')}: supported values: ${kinds.map((k) => `"${k}"`).join(', ')}`,
        reason: 'FieldValueNotSupported',
      });
    }
    if (!ref.name) causes.push({ field: 'roleRef.name', message: 'Required value', reason: 'FieldValueRequired' });
    if (o.subjects != null && !Array.isArray(o.subjects))
      causes.push({ field: 'subjects', message: 'Invalid value: must be a list of subjects' });
    (arr(o.subjects) ?? []).forEach((s, i) =>
      causes.push(...validateSubject(record(s) ?? {}, `subjects[${i}]`, namespaced)),
    );
  }
  return causes;
}

function validateRule(rule: unknown, path: string, namespaced: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  if (!rule || typeof rule !== 'object') return [{ field: path, message: 'Invalid value: must be an object' }];
  // a list has none of a rule's fields: it fails as an empty rule does
  const r = record(rule) ?? {};
  const n = (k: string) => arr(r[k])?.length ?? 0;
  if (n('verbs') === 0)
    out.push({
      field: `${path}.verbs`,
      message: 'Required value: verbs must contain at least one value',
      reason: 'FieldValueRequired',
    });
  if (n('nonResourceURLs') > 0) {
    if (namespaced)
      out.push({
        field: `${path}.nonResourceURLs`,
        message: `Invalid value: ${JSON.stringify(r.nonResourceURLs)}: namespaced rules cannot apply to non-resource URLs`,
      });
    if (n('apiGroups') > 0 || n('resources') > 0 || n('resourceNames') > 0) {
      out.push({
        field: `${path}.nonResourceURLs`,
        message: `Invalid value: ${JSON.stringify(r.nonResourceURLs)}: rules cannot apply to both regular resources and non-resource URLs`,
      });
    }
    return out;
  }
  if (n('apiGroups') === 0)
    out.push({
      field: `${path}.apiGroups`,
      message: 'Required value: resource rules must supply at least one api group',
      reason: 'FieldValueRequired',
    });
  if (n('resources') === 0)
    out.push({
      field: `${path}.resources`,
      message: 'Required value: resource rules must supply at least one resource',
      reason: 'FieldValueRequired',
    });
  return out;
}

function validateSubject(s: JsonObject, path: string, namespaced: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  if (!s.name) out.push({ field: `${path}.name`, message: 'Required value', reason: 'FieldValueRequired' });
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.apiGroup)
        out.push({
          field: `${path}.apiGroup`,
          message: `Unsupported value: ${JSON.stringify(s.apiGroup)}: supported values: ""`,
          reason: 'FieldValueNotSupported',
        });
      if (!s.namespace && !namespaced)
        out.push({ field: `${path}.namespace`, message: 'Required value', reason: 'FieldValueRequired' });
      break;
    case 'User':
    case 'Group':
      // an empty apiGroup is defaulted to rbac.authorization.k8s.io (see defaultSubjects)
      if (s.apiGroup && s.apiGroup !== RBAC_GROUP) {
        out.push({
          field: `${path}.apiGroup`,
          message: `Unsupported value: ${JSON.stringify(s.apiGroup ?? '')}: supported values: "${RBAC_GROUP}"`,
          reason: 'FieldValueNotSupported',
        });
      }
      break;
    default:
      out.push({
        field: `${path}.kind`,
        message: `Unsupported value: ${JSON.stringify(s.kind ?? '')}: supported values: "ServiceAccount", "User", "Group"`,
        reason: 'FieldValueNotSupported',
      });
  }
  return out;
}

/** kube's defaulting of binding subjects: `User` and `Group` subjects without apiGroup get the RBAC group. */
export function defaultSubjects(o: KubeObject): void {
  for (const subject of records(o.subjects))
    if ((subject.kind === 'User' || subject.kind === 'Group') && !subject.apiGroup) subject.apiGroup = RBAC_GROUP;
}

// ---------------------------------------------------------------------------------------------------------------
// Coverage
// ---------------------------------------------------------------------------------------------------------------

// Array.isArray narrows to any[]: the element type is the declared one
const list = (v: readonly string[] | null | undefined): readonly string[] =>
  Array.isArray(v) ? (v as readonly string[]) : [];
const has = (set: readonly string[], x: string) => set.includes(x);
const hasAll = (set: readonly string[], xs: readonly string[]) => xs.every((x) => set.includes(x));

/** Splits a rule into rules with one verb and one group/resource/name, or one verb and one URL. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of list(rule.apiGroups)) {
    for (const resource of list(rule.resources)) {
      for (const verb of list(rule.verbs)) {
        const names = list(rule.resourceNames);
        if (names.length)
          for (const name of names)
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of list(rule.nonResourceURLs))
    for (const verb of list(rule.verbs)) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function resourcesCovered(owner: readonly string[], wanted: readonly string[]): boolean {
  if (has(owner, '*') || hasAll(owner, wanted)) return true;
  for (const r of wanted) {
    if (has(owner, r)) continue;
    const slash = r.indexOf('/');
    if (slash < 0 || !has(owner, `*/${r.slice(slash + 1)}`)) return false;
  }
  return true;
}

function urlCovered(owner: string, path: string): boolean {
  return owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')));
}

/** Whether one held rule covers a (broken-down) wanted rule. */
export function ruleCovers(owner: PolicyRule, wanted: PolicyRule): boolean {
  const verbs = has(list(owner.verbs), '*') || hasAll(list(owner.verbs), list(wanted.verbs));
  const groups = has(list(owner.apiGroups), '*') || hasAll(list(owner.apiGroups), list(wanted.apiGroups));
  const resources = resourcesCovered(list(owner.resources), list(wanted.resources));
  const urls = list(wanted.nonResourceURLs).every((p) => list(owner.nonResourceURLs).some((o) => urlCovered(o, p)));
  const names =
    list(wanted.resourceNames).length === 0
      ? list(owner.resourceNames).length === 0
      : list(owner.resourceNames).length === 0 || hasAll(list(owner.resourceNames), list(wanted.resourceNames));
  return verbs && groups && resources && urls && names;
}

/** The broken-down wanted rules that no held rule covers (empty: the holder has every wanted right). */
export function uncoveredRules(held: PolicyRule[], wanted: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const w of wanted.flatMap(breakdownRule)) if (!held.some((h) => ruleCovers(h, w))) out.push(w);
  return out;
}

function describeRule(r: PolicyRule): string {
  const parts: string[] = [];
  const f = (name: string, v: readonly string[] | undefined) => {
    if (v && v.length) parts.push(`${name}:[${v.map((x) => JSON.stringify(x)).join(' ')}]`);
  };
  f('APIGroups', r.apiGroups);
  f('Resources', r.resources);
  f('ResourceNames', r.resourceNames);
  f('NonResourceURLs', r.nonResourceURLs);
  f('Verbs', r.verbs);
  return `{${parts.join(', ')}}`;
}

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** What the escalation check needs from the authority. */
export interface EscalationDeps {
  objects(): RbacObjects;
  authorize(attrs: AuthzAttributes): AuthzDecision;
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] };
}

function forbiddenWrite(resource: string, name: string, why: string): ApiError {
  return new ApiError(403, 'Forbidden', `${resource}.${RBAC_GROUP} "${name}" is forbidden: ${why}`, {
    name,
    group: RBAC_GROUP,
    kind: resource,
  });
}

function confirmNoEscalation(
  d: EscalationDeps,
  user: UserInfo,
  namespace: string,
  wanted: PolicyRule[],
  resource: string,
  name: string,
): void {
  const { rules: held, errors } = d.rulesFor(user, namespace);
  const missing = uncoveredRules(held, wanted);
  if (!missing.length) return;
  const lines = [...new Set(missing.map(describeRule))].sort();
  let msg = `user ${JSON.stringify(user.username)} (groups=[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (errors.length) msg += `; resolution errors: [${errors.join(' ')}]`;
  throw forbiddenWrite(resource, name, msg);
}

function roleRefRules(d: EscalationDeps, ref: JsonObject, namespace: string): PolicyRule[] {
  const objs = d.objects();
  if (ref.kind === 'ClusterRole') {
    const role = objs.clusterRoles.find((r) => r.metadata?.name === ref.name);
    if (!role) throw notFound('clusterroles', RBAC_GROUP, String(ref.name));
    return role.aggregationRule ? resolveAggregatedRules(objs, role) : ([...(role.rules ?? [])] as PolicyRule[]);
  }
  const role = objs.roles.find((r) => r.metadata?.name === ref.name && (r.metadata?.namespace ?? '') === namespace);
  if (!role) throw notFound('roles', RBAC_GROUP, String(ref.name));
  return [...(role.rules ?? [])] as PolicyRule[];
}

/**
 * Checks a create/update of an RBAC object by `user` (throws 403/404 as kube-apiserver would). `old` is the stored
 * object on update. Writes that change nothing RBAC-relevant (labels, annotations) are not re-checked.
 */
export function admitRbacWrite(
  d: EscalationDeps,
  user: UserInfo,
  resource: string,
  next: KubeObject,
  old: KubeObject | undefined,
): void {
  if (user.groups.includes(SYSTEM_MASTERS)) return;
  const name = String(next.metadata?.name ?? '');
  const namespace = resource === 'roles' || resource === 'rolebindings' ? String(next.metadata?.namespace ?? '') : '';
  if (ROLE_KINDS.has(resource)) {
    if (
      old &&
      isDeepStrictEqual(old.rules ?? null, next.rules ?? null) &&
      isDeepStrictEqual(old.aggregationRule ?? null, next.aggregationRule ?? null)
    )
      return;
    const escalate = d.authorize({
      user,
      verb: 'escalate',
      resourceRequest: true,
      namespace,
      apiGroup: RBAC_GROUP,
      resource,
      name,
    });
    if (escalate.allowed) return;
    confirmNoEscalation(d, user, namespace, (arr(next.rules) ?? []) as PolicyRule[], resource, name);
    if (resource === 'clusterroles' && next.aggregationRule) {
      const { rules: held } = d.rulesFor(user, '');
      if (uncoveredRules(held, FULL_AUTHORITY).length)
        throw forbiddenWrite(resource, name, 'must have cluster-admin privileges to use the aggregationRule');
    }
    return;
  }
  if (!BINDING_KINDS.has(resource)) return;
  if (
    old &&
    isDeepStrictEqual(old.subjects ?? null, next.subjects ?? null) &&
    isDeepStrictEqual(old.roleRef, next.roleRef)
  )
    return;
  const ref = record(next.roleRef) ?? {};
  const bind = d.authorize({
    user,
    verb: 'bind',
    resourceRequest: true,
    namespace,
    apiGroup: RBAC_GROUP,
    resource: ref.kind === 'Role' ? 'roles' : 'clusterroles',
    name: String(ref.name ?? ''),
  });
  if (bind.allowed) return;
  confirmNoEscalation(d, user, namespace, roleRefRules(d, ref, namespace), resource, name);
}
