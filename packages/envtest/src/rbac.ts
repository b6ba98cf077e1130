/**
 * RBAC evaluator of the embedded authority.
 *
 * Decides a request the way kube-apiserver's RBAC authorizer does (behind its privileged-group authorizer for
 * `system:masters`), from plain Kubernetes JSON objects. The semantics follow the Kubernetes RBAC documentation and
 * the behaviour of kube-apiserver:
 * - ClusterRoleBindings grant their ClusterRole everywhere; RoleBindings grant a Role of their own namespace or a
 *   ClusterRole, but only for requests in the binding's namespace. Non-resource requests and cluster-scoped resource
 *   requests carry no namespace, so RoleBindings never grant them (hence never `nonResourceURLs`).
 * - Subjects: `User` by name, `Group` by membership, `ServiceAccount` as user `system:serviceaccount:<ns>:<name>`
 *   (a RoleBinding's ServiceAccount subject without namespace means the binding's namespace; in a
 *   ClusterRoleBinding such a subject matches nobody).
 * - Rules: `verbs` (`*` = all), `apiGroups` (`""` = core, `*` = all), `resources` (`*`, exact `res` or `res/sub`,
 *   and a star-slash-subresource entry for that subresource of any resource), `resourceNames` (empty = any name; otherwise the request's
 *   name must be listed, so a request without a name - list, watch, create - never matches), `nonResourceURLs`
 *   (`*`, exact path, or a trailing `*` meaning "starts with the part before the `*`").
 * - A binding whose role does not exist grants nothing; like kube, the deny reason then names the missing role.
 * - ClusterRoles with an `aggregationRule` are evaluated live as the union of the rules of the ClusterRoles their
 *   selectors pick (what kube's aggregation controller writes into `rules`).
 *
 * Reasons: allow → `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"` (RoleBindings:
 * `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`); `system:masters` → allowed with an empty reason;
 * deny → empty reason unless a role reference could not be resolved (`RBAC: clusterrole.rbac.authorization.k8s.io
 * "x" not found`), exactly the strings kube-apiserver puts into a SubjectAccessReview's `status.reason`.
 */

/** The authenticated user a request is made as (the shape of a TokenReview's `status.user`). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What is being asked (the shape of a SubjectAccessReview's spec, flattened). */
export interface AuthzAttributes {
  user: UserInfo;
  verb: string;
  /** true: a resource request (apiGroup/resource/...); false: a non-resource request (path). */
  resourceRequest: boolean;
  /** Non-resource requests: the URL path, e.g. `/metrics`. */
  path?: string;
  namespace?: string;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

/** One rule of a Role or ClusterRole (`rbac.authorization.k8s.io/v1` PolicyRule). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface ClusterRole {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] | null } | null;
}

export interface Role {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  rules?: PolicyRule[] | null;
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface ClusterRoleBinding {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  subjects?: Subject[] | null;
  roleRef: RoleRef;
}

export interface RoleBinding {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  subjects?: Subject[] | null;
  roleRef: RoleRef;
}

/** The RBAC objects an authorization decision is made from (plain Kubernetes JSON objects). */
export interface RbacObjects {
  clusterRoles: ClusterRole[];
  clusterRoleBindings: ClusterRoleBinding[];
  roles: Role[];
  roleBindings: RoleBinding[];
}

/** The outcome of {@link authorize}: `reason` is what kube-apiserver puts into `status.reason`. */
export interface AuthzDecision {
  allowed: boolean;
  reason: string;
}

/** kube-apiserver's superuser group: allowed everything, before RBAC is consulted. */
export const SYSTEM_MASTERS = 'system:masters';
const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';

/** `system:serviceaccount:<namespace>:<name>`, the username of a service account. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Rule matching
// ---------------------------------------------------------------------------------------------------------------

/**
 * The list in a field that should hold one. Stored objects are validated by the API layer, but a malformed value
 * (a string, an object) must never crash a decision: it counts as an empty list, which grants nothing.
 */
function list<T>(v: readonly T[] | null | undefined): readonly T[] {
  // Array.isArray narrows to any[]: the element type is the declared one
  return Array.isArray(v) ? (v as readonly T[]) : [];
}

/** True when the rule lists the verb or `*`. */
export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return list(rule.verbs).some((v) => v === '*' || v === verb);
}

/** True when the rule lists the API group (`""` is the core group) or `*`. */
export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return list(rule.apiGroups).some((g) => g === '*' || g === group);
}

/**
 * True when the rule covers the resource: `*`, the exact `resource` or `resource/subresource`, or a star-slash-subresource
 * entry (e.g. any resource's `scale`). `pods` does not cover `pods/log`, nor does `pods/*`.
 */
export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of list(rule.resources)) {
    if (r === '*' || r === combined) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

/** True when the rule names no resources (any name) or names this one. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  if (rule.resourceNames == null) return true;
  if (!Array.isArray(rule.resourceNames)) return false; // malformed: fail closed rather than "any name"
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

/** True when a `nonResourceURLs` entry is `*`, equals the path, or ends in `*` and the path starts with its stem. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of list(rule.nonResourceURLs)) {
    if (typeof u !== 'string') continue;
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** True when this single rule allows the request (resource or non-resource). */
export function ruleAllows(attrs: AuthzAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (attrs.resourceRequest) {
    return (
      apiGroupMatches(rule, attrs.apiGroup ?? '') &&
      resourceMatches(rule, attrs.resource ?? '', attrs.subresource ?? '') &&
      resourceNameMatches(rule, attrs.name ?? '')
    );
  }
  return nonResourceURLMatches(rule, attrs.path ?? '');
}

// ---------------------------------------------------------------------------------------------------------------
// Label selectors and aggregation
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether a label selector matches a set of labels (`matchLabels` AND every `matchExpressions` requirement; an empty
 * selector matches everything). An unknown operator makes the selector match nothing, as an invalid selector does
 * in kube.
 */
export function labelSelectorMatches(
  selector: LabelSelector,
  labels: Record<string, string> | undefined | null,
): boolean {
  const l: Record<string, string> = labels ?? {};
  const ml = selector.matchLabels;
  if (ml) {
    for (const k in ml) {
      if (!Object.hasOwn(ml, k)) continue;
      if (!Object.hasOwn(l, k) || l[k] !== ml[k]) return false;
    }
  }
  for (const req of list(selector.matchExpressions)) {
    if (!req) return false;
    const has = Object.hasOwn(l, req.key);
    const values = list(req.values);
    switch (req.operator) {
      case 'In':
        if (values.length === 0 || !has || !values.includes(l[req.key])) return false;
        break;
      case 'NotIn':
        if (values.length === 0) return false;
        if (has && values.includes(l[req.key])) return false;
        break;
      case 'Exists':
        if (values.length > 0 || !has) return false;
        break;
      case 'DoesNotExist':
        if (values.length > 0 || has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** A collision-free identity of a rule's contents (length-prefixed fields), for de-duplicating aggregated rules. */
function ruleKey(r: PolicyRule): string {
  let k = '';
  for (const field of [r.verbs, r.apiGroups, r.resources, r.resourceNames, r.nonResourceURLs]) {
    if (field != null && !Array.isArray(field)) k += '!'; // keep malformed fields distinct from empty ones
    for (const item of list(field)) k += `${String(item).length}:${String(item)}`;
    k += '|';
  }
  return k;
}

function nameOf(o: { metadata?: ObjectMeta } | undefined): string {
  return o?.metadata?.name ?? '';
}

function byName<T extends { metadata: ObjectMeta }>(a: T, b: T): number {
  const x = nameOf(a);
  const y = nameOf(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The effective rules of a ClusterRole. Without an `aggregationRule`: its own `rules`. With one: the union (without
 * duplicates, in selector order then by role name) of the effective rules of every other ClusterRole a selector
 * picks, which is what kube's aggregation controller keeps in `rules` (it overwrites hand-written rules). Nested
 * aggregation (admin ← edit ← view) resolves transitively; cycles terminate.
 */
export function resolveAggregatedRules(objects: RbacObjects, role: ClusterRole): PolicyRule[] {
  return resolveRules(sortedClusterRoles(objects), role, new Set());
}

/** The well-formed ClusterRoles sorted by name (the order kube's aggregation controller unions them in). */
function sortedClusterRoles(objects: RbacObjects): ClusterRole[] {
  return list(objects.clusterRoles)
    .filter((r) => !!r?.metadata?.name)
    .sort(byName);
}

function resolveRules(sorted: ClusterRole[], role: ClusterRole, visiting: Set<string>): PolicyRule[] {
  const agg = role.aggregationRule;
  if (!agg) return list(role.rules) as PolicyRule[];
  visiting.add(nameOf(role));
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const selector of list(agg.clusterRoleSelectors)) {
    if (!selector) continue;
    for (const candidate of sorted) {
      if (nameOf(candidate) === nameOf(role)) continue;
      if (!labelSelectorMatches(selector, candidate?.metadata?.labels)) continue;
      const rules = visiting.has(nameOf(candidate)) ? list(candidate.rules) : resolveRules(sorted, candidate, visiting);
      for (const r of rules) {
        if (!r) continue;
        const k = ruleKey(r);
        if (!seen.has(k)) {
          seen.add(k);
          out.push(r);
        }
      }
    }
  }
  visiting.delete(nameOf(role));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Subjects and bindings
// ---------------------------------------------------------------------------------------------------------------

/** Whether a binding subject is this user; `bindingNamespace` is '' for ClusterRoleBindings. */
export function subjectMatches(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return list(user.groups).includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      if (!ns) return false;
      return user.username === serviceAccountUsername(ns, subject.name);
    }
    default:
      return false;
  }
}

/** Go's %q for the strings that appear in reasons (names are printable; control characters escaped like Go). */
function q(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${q(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${q(s.name)}`;
}

type RoleLookup = { rules: PolicyRule[] } | { error: string };

interface Index {
  clusterRoles: Map<string, ClusterRole>;
  roles: Map<string, Role>; // key ns/name
  /** Built on first use: only aggregated roles need it. */
  sorted?: ClusterRole[];
  /** Effective rules per aggregated ClusterRole name, for the duration of one decision. */
  resolved: Map<string, PolicyRule[]>;
}

function buildIndex(objects: RbacObjects): Index {
  const clusterRoles = new Map<string, ClusterRole>();
  for (const r of list(objects.clusterRoles)) if (r?.metadata?.name) clusterRoles.set(r.metadata.name, r);
  const roles = new Map<string, Role>();
  for (const r of list(objects.roles)) {
    if (r?.metadata?.name) roles.set(`${r.metadata.namespace ?? ''}/${r.metadata.name}`, r);
  }
  return { clusterRoles, roles, resolved: new Map() };
}

function lookupRoleRef(objects: RbacObjects, idx: Index, ref: RoleRef, bindingNamespace: string): RoleLookup {
  switch (ref.kind) {
    case 'Role': {
      const role = bindingNamespace ? idx.roles.get(`${bindingNamespace}/${ref.name}`) : undefined;
      if (!role) return { error: `role.rbac.authorization.k8s.io ${q(ref.name)} not found` };
      return { rules: list(role.rules) as PolicyRule[] };
    }
    case 'ClusterRole': {
      const role = idx.clusterRoles.get(ref.name);
      if (!role) return { error: `clusterrole.rbac.authorization.k8s.io ${q(ref.name)} not found` };
      if (!role.aggregationRule) return { rules: list(role.rules) as PolicyRule[] };
      let rules = idx.resolved.get(ref.name);
      if (!rules) {
        idx.sorted ??= sortedClusterRoles(objects);
        rules = resolveRules(idx.sorted, role, new Set());
        idx.resolved.set(ref.name, rules);
      }
      return { rules };
    }
    default:
      return { error: `unsupported role reference kind: ${q(ref.kind)}` };
  }
}

/** Joins resolution errors like Kubernetes' error aggregate: one → itself; several → `[a, b]` without repeats. */
function aggregateErrors(errors: string[]): string {
  const unique = [...new Set(errors)];
  if (unique.length === 1) return unique[0];
  return `[${unique.join(', ')}]`;
}

/**
 * Decides a request: `system:masters` first (allowed, empty reason), then RBAC over the ClusterRoleBindings and, for
 * a namespaced request, the RoleBindings of that namespace. Never throws on malformed bindings: they grant nothing.
 */
export function authorize(objects: RbacObjects, attrs: AuthzAttributes): AuthzDecision {
  const user = attrs?.user;
  if (!user) return { allowed: false, reason: '' };
  if (list(user.groups).includes(SYSTEM_MASTERS)) return { allowed: true, reason: '' };

  const idx = buildIndex(objects);
  const errors: string[] = [];

  const tryBinding = (
    binding: ClusterRoleBinding | RoleBinding,
    bindingNamespace: string,
    describe: (subject: Subject) => string,
  ): string | undefined => {
    const subject = list(binding.subjects).find((s) => !!s && subjectMatches(user, s, bindingNamespace));
    if (!subject || !binding.roleRef) return undefined;
    const found = lookupRoleRef(objects, idx, binding.roleRef, bindingNamespace);
    if ('error' in found) {
      errors.push(found.error);
      return undefined;
    }
    if (found.rules.some((r) => !!r && ruleAllows(attrs, r))) return `RBAC: allowed by ${describe(subject)}`;
    return undefined;
  };

  for (const b of list(objects.clusterRoleBindings)) {
    if (!b) continue;
    const reason = tryBinding(
      b,
      '',
      (s) =>
        `ClusterRoleBinding ${q(nameOf(b))} of ${b.roleRef.kind} ${q(b.roleRef.name)} to ${describeSubject(s, '')}`,
    );
    if (reason) return { allowed: true, reason };
  }

  // Non-resource requests never carry a namespace in kube, so RoleBindings can never grant a nonResourceURL.
  const ns = attrs.resourceRequest ? (attrs.namespace ?? '') : '';
  if (ns) {
    for (const b of list(objects.roleBindings)) {
      if (!b || (b.metadata?.namespace ?? '') !== ns) continue;
      const reason = tryBinding(
        b,
        ns,
        (s) =>
          `RoleBinding ${q(`${nameOf(b)}/${ns}`)} of ${b.roleRef.kind} ${q(b.roleRef.name)} to ${describeSubject(s, ns)}`,
      );
      if (reason) return { allowed: true, reason };
    }
  }

  return { allowed: false, reason: errors.length ? `RBAC: ${aggregateErrors(errors)}` : '' };
}

/**
 * The rules that apply to a user in a namespace ('' = cluster-wide only), as for a SelfSubjectRulesReview:
 * `{ rules, errors }`, rules in binding order. `system:masters` is not special-cased here (kube answers its rules
 * from cluster-admin's binding too).
 */
export function rulesFor(
  objects: RbacObjects,
  user: UserInfo,
  namespace: string,
): { rules: PolicyRule[]; errors: string[] } {
  const idx = buildIndex(objects);
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  const visit = (b: ClusterRoleBinding | RoleBinding, bindingNamespace: string): void => {
    if (!b || !list(b.subjects).some((s) => !!s && subjectMatches(user, s, bindingNamespace)) || !b.roleRef) return;
    const found = lookupRoleRef(objects, idx, b.roleRef, bindingNamespace);
    if ('error' in found) errors.push(found.error);
    else rules.push(...found.rules);
  };
  for (const b of list(objects.clusterRoleBindings)) visit(b, '');
  if (namespace)
    for (const b of list(objects.roleBindings)) if ((b?.metadata?.namespace ?? '') === namespace) visit(b, namespace);
  return { rules, errors };
}
